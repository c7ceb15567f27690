package openai

import (
	"errors"
	"net/http"

	oai "github.com/openai/openai-go/v3"

	"github.com/lubanhq/luban/model/internal/retry"
)

// retryable reports whether a failed attempt is worth another: an HTTP 408,
// 409, 429 or 5xx answer, or anything that is not an HTTP answer at all
// (connection refused or reset, a stream cut mid-way, an error event inside
// the stream, ErrIncompleteStream). Other 4xx answers (bad request, auth,
// unknown model) would fail the same way again.
func retryable(err error) bool {
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		return retry.RetryableStatus(apiErr.StatusCode)
	}
	return true
}

// retryHeader is the header of the HTTP error answer behind err, where
// retry-after-ms or Retry-After may say how long to wait; nil otherwise.
func retryHeader(err error) http.Header {
	var apiErr *oai.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		return apiErr.Response.Header
	}
	return nil
}
