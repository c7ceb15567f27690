package wiregen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/lubanhq/luban/api"
)

// obj is a JSON object whose keys keep the order they were set in, so the
// document reads top-down (openapi, info, paths, components).
type obj struct {
	keys []string
	vals map[string]any
}

func newObj(kv ...any) *obj {
	o := &obj{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func (o *obj) set(k string, v any) *obj {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
	return o
}

// MarshalJSON writes the keys in insertion order.
func (o *obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func ref(name string) *obj { return newObj("$ref", "#/components/schemas/"+name) }

// EventsKey is the extension of a text/event-stream media type in the
// document that maps each SSE event name to the schema of its payload.
const EventsKey = "x-events"

var pathParam = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// OpenAPI returns the OpenAPI 3.1 document of /api: one path item per
// api.Endpoints route, one component schema per api type (objects are
// closed: additionalProperties false; fields without omitempty are
// required; pointers may be null), and for every SSE response the schema of
// each event's payload under EventsKey. dir is api's source directory.
func OpenAPI(dir string) ([]byte, error) {
	p, err := parse(dir)
	if err != nil {
		return nil, err
	}
	schemas := newObj()
	for _, td := range p.types {
		s, err := schemaOf(p, td)
		if err != nil {
			return nil, err
		}
		schemas.set(td.Name, s)
	}
	events := newObj()
	for _, e := range api.Events {
		events.set(e.Name, ref(typeName(e.Payload)))
	}
	paths := newObj()
	for _, ep := range api.Endpoints {
		item, ok := paths.vals[ep.Path].(*obj)
		if !ok {
			item = newObj()
			paths.set(ep.Path, item)
		}
		op, err := operation(ep, events)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", ep.Method, ep.Path, err)
		}
		item.set(strings.ToLower(ep.Method), op)
	}
	doc := newObj(
		"openapi", "3.1.0",
		"info", newObj(
			"title", "luban API",
			"version", "1",
			"description", "luban's HTTP API: start a run, answer its structured questions once, follow its events over SSE (docs/design.md §3). "+
				"Every call carries Authorization: Bearer <token>. Errors are {\"error\": {code, message, ...}} with the status of their code. "+
				"SSE events carry id: <n>, a per-session sequence number to resume after with Last-Event-ID; the payload schema of each event name is under "+EventsKey+".",
		),
		// Where the API is: luban serve's --addr (default 127.0.0.1:8080),
		// or the address a proxy gives it; every path starts with /api.
		"servers", []any{newObj(
			"url", "{scheme}://{host}",
			"description", "a luban server: luban serve --addr (default 127.0.0.1:8080), or its address behind a proxy",
			"variables", newObj(
				"scheme", newObj("default", "http", "enum", []any{"http", "https"}),
				"host", newObj("default", "127.0.0.1:8080", "description", "host and port"),
			),
		)},
		"security", []any{newObj("bearer", []any{})},
		"paths", paths,
		"components", newObj(
			"securitySchemes", newObj("bearer", newObj("type", "http", "scheme", "bearer")),
			"schemas", schemas,
		),
	)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func operation(ep api.Endpoint, events *obj) (*obj, error) {
	op := newObj("summary", ep.Summary)
	if ep.Description != "" {
		op.set("description", ep.Description)
	}
	op.set("operationId", operationID(ep))
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(ep.Path, -1) {
		params = append(params, newObj("name", m[1], "in", "path", "required", true, "schema", newObj("type", "string")))
	}
	for _, pm := range ep.Params {
		if pm.In != "query" && pm.In != "header" {
			return nil, fmt.Errorf("param %s: In must be query or header", pm.Name)
		}
		o := newObj("name", pm.Name, "in", pm.In)
		if pm.Description != "" {
			o.set("description", pm.Description)
		}
		o.set("required", pm.Required)
		o.set("schema", newObj("type", "string"))
		params = append(params, o)
	}
	if len(params) > 0 {
		op.set("parameters", params)
	}
	if ep.SlackSigned {
		// No bearer token: Slack signs the request (X-Slack-Signature).
		op.set("security", []any{})
		op.set("requestBody", newObj("required", true, "content", newObj("application/x-www-form-urlencoded", newObj("schema",
			newObj("type", "object", "required", []any{"payload"}, "properties", newObj("payload",
				newObj("type", "string", "description", "Slack's interaction payload (JSON), as Slack sends it")))))))
	}
	if ep.Request != nil {
		schema := ref(typeName(ep.Request))
		if ep.RequestAlt != nil {
			schema = newObj("oneOf", []any{schema, ref(typeName(ep.RequestAlt))})
		}
		op.set("requestBody", newObj("required", true, "content", newObj("application/json", newObj("schema", schema))))
	}
	responses := newObj()
	for _, r := range ep.Responses {
		desc := r.Description
		if desc == "" {
			desc = http.StatusText(r.Status)
		}
		ro := newObj("description", desc)
		switch {
		case r.Body == nil && !r.Stream:
			// No body.
		case r.Stream:
			ro.set("content", newObj("text/event-stream", newObj(
				"schema", newObj("type", "string", "description", "SSE frames: id: <seq>, event: <name>, data: <payload JSON>; comment lines are heartbeats"),
				EventsKey, events)))
		case typeName(r.Body) == "":
			ro.set("content", newObj("application/json", newObj("schema", newObj("type", "object"))))
		default:
			ro.set("content", newObj("application/json", newObj("schema", ref(typeName(r.Body)))))
		}
		responses.set(strconv.Itoa(r.Status), ro)
	}
	byStatus := map[int][]string{http.StatusUnauthorized: {string(api.CodeUnauthorized)}}
	for _, c := range ep.Errors {
		st := c.HTTPStatus()
		byStatus[st] = append(byStatus[st], string(c))
	}
	statuses := make([]int, 0, len(byStatus))
	for st := range byStatus {
		statuses = append(statuses, st)
	}
	sort.Ints(statuses)
	for _, st := range statuses {
		responses.set(strconv.Itoa(st), newObj(
			"description", http.StatusText(st)+": "+strings.Join(byStatus[st], ", "),
			"content", newObj("application/json", newObj("schema", ref("ErrorBody")))))
	}
	op.set("responses", responses)
	return op, nil
}

// operationID is a stable name of the route: "post_api_chat_continue".
func operationID(ep api.Endpoint) string {
	s := strings.ToLower(ep.Method) + "_" + strings.Trim(ep.Path, "/")
	return strings.NewReplacer("/", "_", "{", "", "}", "", ".", "_").Replace(s)
}

func schemaOf(p *pkg, td *typeDef) (*obj, error) {
	if td.IsEnum {
		vals := make([]string, len(td.Enum))
		for i, v := range td.Enum {
			vals[i] = v.Value
		}
		return newObj("type", "string", "description", oneLine(td.Doc), "enum", vals), nil
	}
	fs, err := p.flat(td)
	if err != nil {
		return nil, err
	}
	props := newObj()
	required := []string{}
	for _, f := range fs {
		s, err := fieldSchema(p, f.Type, !f.OmitEmpty)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", td.Name, f.JSON, err)
		}
		if f.Doc != "" {
			if _, isRef := s.vals["$ref"]; !isRef {
				s.set("description", oneLine(f.Doc))
			} else {
				s = newObj("description", oneLine(f.Doc), "allOf", []any{s})
			}
		}
		props.set(f.JSON, s)
		if !f.OmitEmpty {
			required = append(required, f.JSON)
		}
	}
	return newObj("type", "object", "description", oneLine(td.Doc), "properties", props, "required", required, "additionalProperties", false), nil
}

// fieldSchema is the schema of a field of type e. A pointer that is always
// present (no omitempty) may be null; one with omitempty is absent instead.
func fieldSchema(p *pkg, e ast.Expr, present bool) (*obj, error) {
	switch t := e.(type) {
	case *ast.Ident:
		switch t.Name {
		case "string":
			return newObj("type", "string"), nil
		case "bool":
			return newObj("type", "boolean"), nil
		case "int", "int32", "int64":
			return newObj("type", "integer"), nil
		case "float64":
			return newObj("type", "number"), nil
		case "any":
			return newObj(), nil
		}
		if p.byName[t.Name] == nil {
			return nil, fmt.Errorf("unknown type %s", t.Name)
		}
		return ref(t.Name), nil
	case *ast.StarExpr:
		inner, err := fieldSchema(p, t.X, true)
		if err != nil {
			return nil, err
		}
		if !present {
			return inner, nil
		}
		return newObj("anyOf", []any{inner, newObj("type", "null")}), nil
	case *ast.ArrayType:
		inner, err := fieldSchema(p, t.Elt, true)
		if err != nil {
			return nil, err
		}
		return newObj("type", "array", "items", inner), nil
	case *ast.MapType:
		inner, err := fieldSchema(p, t.Value, true)
		if err != nil {
			return nil, err
		}
		return newObj("type", "object", "additionalProperties", inner), nil
	case *ast.SelectorExpr:
		switch sel := fmt.Sprintf("%s.%s", t.X, t.Sel.Name); sel {
		case "time.Time":
			return newObj("type", "string", "format", "date-time"), nil
		case "json.RawMessage":
			return newObj(), nil
		default:
			return nil, fmt.Errorf("unsupported type %s", sel)
		}
	}
	return nil, fmt.Errorf("unsupported type expression %T", e)
}
