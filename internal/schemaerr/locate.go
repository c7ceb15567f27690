package schemaerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/lubanhq/luban/api"
)

// DecodeText is Decode for an error of decoding the JSON text data into v
// (a pointer, as given to json.Unmarshal or Decoder.Decode) whose field
// paths are exact, as docs/design.md §3 writes them: with array indices
// ("answers[0].requestId", where encoding/json says "answers.requestId")
// and an unknown field named below its object ("answers[0].bogus", where
// encoding/json names "bogus" alone). The text is read again only when
// decoding failed; where it does not show the place (a value decoded by a
// json.Unmarshaler, a shape encoding/json reports otherwise), the field is
// Decode's.
func DecodeText(err error, root string, data []byte, v any) api.FieldError {
	fe := Decode(err, root)
	var t reflect.Type
	if v != nil {
		t = reflect.TypeOf(v)
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		kind, lit, _ := strings.Cut(te.Value, " ")
		want := stripIndices(join(root, te.Field))
		p, ok := locate(data, root, t, func(path string, _ reflect.Type, k, l string) bool {
			return k == kind && (lit == "" || l == lit) && stripIndices(path) == want
		}, nil)
		if ok && p != fe.Field {
			fe.Field = p
			fe.Message = fmt.Sprintf("%s must be a JSON %s, not %s", p, fe.Params["expected"], fe.Params["got"])
		}
	case fe.Code == api.DetailUnknownField:
		name := strings.TrimPrefix(fe.Field, root+".")
		if root == "" {
			name = fe.Field
		}
		p, ok := locate(data, root, t, nil, func(path, key string) bool { return key == name })
		if ok {
			fe.Field = p
		}
	}
	return fe
}

// locate walks the JSON text data decoded into a value of type t (nil: a
// free-form value) and returns the path of the first value, in the text's
// order, for which value holds (its path, Go type, JSON kind and, for a
// number, its literal), or of the first object key its struct type has no
// field for that unknown accepts. ok is false when neither is found or
// the text does not parse.
func locate(data []byte, root string, t reflect.Type, value func(path string, t reflect.Type, kind, lit string) bool, unknown func(path, key string) bool) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var found string
	errFound := errors.New("found")
	var walk func(path string, t reflect.Type) error
	walk = func(path string, t reflect.Type) error {
		t = deref(t)
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		kind, lit := "", ""
		switch v := tok.(type) {
		case json.Delim:
			kind = map[json.Delim]string{'{': "object", '[': "array"}[v]
		case string:
			kind = "string"
		case json.Number:
			kind, lit = "number", v.String()
		case bool:
			kind = "bool"
		case nil:
			kind = "null"
		}
		if value != nil && value(path, t, kind, lit) {
			found = path
			return errFound
		}
		switch kind {
		case "object":
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				sub := key
				if path != "" {
					sub = path + "." + key
				}
				ft, known := field(t, key)
				if !known && unknown != nil && unknown(path, key) {
					found = sub
					return errFound
				}
				if err := walk(sub, ft); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case "array":
			var et reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				et = t.Elem()
			}
			for i := 0; dec.More(); i++ {
				if err := walk(path+"["+strconv.Itoa(i)+"]", et); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(root, t); errors.Is(err, errFound) {
		return found, true
	}
	return "", false
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// deref is t without its pointers; nil (free-form) for an interface or a
// type that decodes itself (json.Unmarshaler), whose fields encoding/json
// does not check.
func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	return t
}

// field is the type of the value under key in an object decoded into t,
// and whether t takes the key: a struct's field by its JSON name (an exact
// match first, then one equal under case folding, as encoding/json
// matches); any key of a map or a free-form value.
func field(t reflect.Type, key string) (reflect.Type, bool) {
	if t == nil {
		return nil, true
	}
	switch t.Kind() {
	case reflect.Map:
		return t.Elem(), true
	case reflect.Struct:
	default:
		return nil, true
	}
	var fold reflect.Type
	folded := false
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || (f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("json") == "") {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f.Type, true
		}
		if !folded && strings.EqualFold(name, key) {
			fold, folded = f.Type, true
		}
	}
	return fold, folded
}

// stripIndices is path without its array indices: "a[0].b[12]" is "a.b",
// encoding/json's UnmarshalTypeError.Field.
func stripIndices(path string) string {
	if !strings.Contains(path, "[") {
		return path
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '[')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		b.WriteString(path[:i])
		j := strings.IndexByte(path[i:], ']')
		if j < 0 {
			return b.String()
		}
		path = path[i+j+1:]
	}
}
