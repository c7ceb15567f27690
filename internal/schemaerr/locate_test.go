package schemaerr

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
)

type entry struct {
	RequestID  string         `json:"requestId"`
	Selections []string       `json:"selections"`
	Meta       map[string]any `json:"meta"`
	Raw        json.RawMessage
}

type batch struct {
	SessionID string  `json:"sessionId"`
	Answers   []entry `json:"answers"`
	Limit     uint    `json:"limit"`
}

// DecodeText names the place of encoding/json's error in the text, with
// array indices, and an unknown field below its object; a key a map or a
// free-form value holds is never taken for it, and encoding/json's
// case-insensitive match of a field is followed.
func TestDecodeTextNamesThePlace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body, field string
		code        api.FieldCode
		msg         string
	}{
		{`{"answers":[{"requestId":"a"},{"requestId":5}]}`, "answers[1].requestId", api.DetailInvalidType, "answers[1].requestId must be a JSON string, not number"},
		{`{"answers":[1]}`, "answers[0]", api.DetailInvalidType, "answers[0] must be a JSON object, not number"},
		{`{"answers":[{"selections":["a",true]}]}`, "answers[0].selections[1]", api.DetailInvalidType, ""},
		{`{"answers":{}}`, "answers", api.DetailInvalidType, "answers must be a JSON array, not object"},
		{`{"limit":1,"answers":[],"limit":-1}`, "limit", api.DetailInvalidType, ""},
		{`{"answers":[{"meta":{"bogus":1},"bogus":2}]}`, "answers[0].bogus", api.DetailUnknownField, "unknown field"},
		{`{"answers":[{"Raw":{"bogus":1}},{"REQUESTID":"x","bogus":2}]}`, "answers[1].bogus", api.DetailUnknownField, "unknown field"},
		{`{"bogus":1}`, "bogus", api.DetailUnknownField, "unknown field"},
		{`[1]`, "", api.DetailInvalidType, "body must be a JSON object, not array"},
	} {
		var v batch
		dec := json.NewDecoder(bytes.NewReader([]byte(c.body)))
		dec.DisallowUnknownFields()
		err := dec.Decode(&v)
		require.Error(t, err, c.body)
		fe := DecodeText(err, "", []byte(c.body), &v)
		require.Equal(t, c.field, fe.Field, c.body)
		require.Equal(t, c.code, fe.Code, c.body)
		if c.msg != "" {
			require.Equal(t, c.msg, fe.Message, c.body)
		}
	}
}

// Below a root (an AG-UI resume entry's payload) the paths start with it.
func TestDecodeTextBelowARoot(t *testing.T) {
	t.Parallel()
	body := []byte(`{"answers":[{"requestId":"a","bogus":1}]}`)
	var v batch
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(&v)
	require.Error(t, err)
	require.Equal(t, "resume[0].payload.answers[0].bogus", DecodeText(err, "resume[0].payload", body, &v).Field)
	err = json.Unmarshal([]byte(`{"answers":[{"requestId":7}]}`), &v)
	require.Equal(t, "resume[0].payload.answers[0].requestId", DecodeText(err, "resume[0].payload", []byte(`{"answers":[{"requestId":7}]}`), &v).Field)
}
