package anthropic

import (
	"errors"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/lubanhq/luban/model/internal/retry"
)

// retryable reports whether a failed attempt is worth another.
//   - An HTTP error answer: 408, 409, 429, 5xx and 529 (overloaded) yes;
//     other 4xx (bad request, auth, unknown model) would fail again.
//   - An error event inside a 200 stream: yes unless its type says the
//     request itself is wrong (invalid_request_error, authentication_error,
//     permission_error, not_found_error).
//   - Anything else (connection refused or reset, a stream cut mid-way,
//     ErrIncompleteStream): yes.
func retryable(err error) bool {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return true
	}
	if s := apiErr.StatusCode; s >= 400 {
		return retry.RetryableStatus(s)
	}
	switch apiErr.Type() {
	case "invalid_request_error", "authentication_error", "permission_error", "not_found_error":
		return false
	}
	return true
}

// retryHeader is the header of the HTTP error answer behind err, where
// retry-after-ms or retry-after (Anthropic sends seconds on 429 and 529)
// may say how long to wait; nil otherwise.
func retryHeader(err error) http.Header {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		return apiErr.Response.Header
	}
	return nil
}
