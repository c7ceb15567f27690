package askuser

import (
	"strconv"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/jsonstr"
)

// decodeAskUser reads ask_user arguments of the shape models send in one
// pass, checking what the JSON Schema of askUserSchema checks (types,
// required fields, no unknown fields, the mode enum, lengths in runes, at
// most MaxOptions options) while it decodes. It returns ok only when the
// schema path of ParseArgs (decode into a generic value, validate, encode
// again, decode into a Prompt) would accept raw and produce the same
// Prompt; for anything else — a schema violation, invalid JSON, a key given
// twice (the schema path keeps the last, this path would have to undo the
// first), options sent as an encoded string, a lone surrogate escape or
// invalid UTF-8 (which encoding/json replaces), a number out of range — it
// returns ok false and ParseArgs takes the schema path, which gives the
// error message. Strings without escapes are slices of raw.
func decodeAskUser(raw string) (p *api.Prompt, ok bool) {
	d := argScanner{s: raw}
	if !d.lit('{') {
		return nil, false
	}
	p = &api.Prompt{}
	const title, description, mode, options, allowCustom, submitLabel, minimum, maximum, integer = 1, 2, 4, 8, 16, 32, 64, 128, 256
	var seen uint16
	for {
		k, ok := d.str()
		if !ok || !d.lit(':') {
			return nil, false
		}
		var field uint16
		switch k {
		case "title":
			field = title
			p.Title, ok = d.strLen(1, MaxTitleLen)
		case "description":
			field = description
			p.Description, ok = d.strLen(0, MaxDescriptionLen)
		case "mode":
			field = mode
			var m string
			if m, ok = d.str(); ok {
				ok = false
				for _, e := range modeEnum {
					if m == e {
						p.Mode, ok = api.Mode(e), true
						break
					}
				}
			}
		case "options":
			field = options
			p.Options, ok = d.options()
		case "allowCustom":
			field = allowCustom
			p.AllowCustom, ok = d.boolean()
		case "submitLabel":
			field = submitLabel
			p.SubmitLabel, ok = d.strLen(0, MaxSubmitLabelLen)
		case "minimum":
			field = minimum
			p.Minimum, ok = d.number()
		case "maximum":
			field = maximum
			p.Maximum, ok = d.number()
		case "integer":
			field = integer
			p.Integer, ok = d.boolean()
		}
		if !ok || field == 0 || seen&field != 0 {
			return nil, false
		}
		seen |= field
		if d.lit(',') {
			continue
		}
		if !d.lit('}') {
			return nil, false
		}
		break
	}
	d.ws()
	if d.i != len(d.s) || seen&(title|mode) != title|mode {
		return nil, false
	}
	return p, true
}

// options reads ask_user's options array (the items schema of askUserSchema).
func (d *argScanner) options() ([]api.Option, bool) {
	if !d.lit('[') {
		return nil, false
	}
	if d.lit(']') {
		return []api.Option{}, true
	}
	var opts []api.Option
	const id, label, description, recommended = 1, 2, 4, 8
	for {
		if len(opts) == MaxOptions || !d.lit('{') {
			return nil, false
		}
		var o api.Option
		var seen uint8
		for {
			k, ok := d.str()
			if !ok || !d.lit(':') {
				return nil, false
			}
			var field uint8
			switch k {
			case "id":
				field = id
				o.ID, ok = d.strLen(1, MaxOptionIDLen)
			case "label":
				field = label
				o.Label, ok = d.strLen(1, MaxLabelLen)
			case "description":
				field = description
				o.Description, ok = d.strLen(0, MaxOptionDescriptionLen)
			case "recommended":
				field = recommended
				o.Recommended, ok = d.boolean()
			}
			if !ok || field == 0 || seen&field != 0 {
				return nil, false
			}
			seen |= field
			if d.lit(',') {
				continue
			}
			if !d.lit('}') {
				return nil, false
			}
			break
		}
		if seen&(id|label) != id|label {
			return nil, false
		}
		if opts == nil {
			opts = make([]api.Option, 0, 4)
		}
		opts = append(opts, o)
		if d.lit(',') {
			continue
		}
		if !d.lit(']') {
			return nil, false
		}
		return opts, true
	}
}

// argScanner reads a JSON text strictly (RFC 8259); every method skips
// leading white space and reports ok false for anything it does not read.
type argScanner struct {
	s string
	i int
}

func (d *argScanner) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// lit reads the byte c.
func (d *argScanner) lit(c byte) bool {
	d.ws()
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

// word reads the literal w.
func (d *argScanner) word(w string) bool {
	if len(d.s)-d.i >= len(w) && d.s[d.i:d.i+len(w)] == w {
		d.i += len(w)
		return true
	}
	return false
}

func (d *argScanner) boolean() (bool, bool) {
	d.ws()
	if d.word("true") {
		return true, true
	}
	return false, d.word("false")
}

// number reads a JSON number as encoding/json decodes it into a float64.
func (d *argScanner) number() (*float64, bool) {
	d.ws()
	start := d.i
	digits := func() bool {
		n := d.i
		for d.i < len(d.s) && d.s[d.i] >= '0' && d.s[d.i] <= '9' {
			d.i++
		}
		return d.i > n
	}
	if d.i < len(d.s) && d.s[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.s) && d.s[d.i] == '0':
		d.i++
	case !digits():
		return nil, false
	}
	if d.i < len(d.s) && d.s[d.i] == '.' {
		d.i++
		if !digits() {
			return nil, false
		}
	}
	if d.i < len(d.s) && (d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
		if d.i < len(d.s) && (d.s[d.i] == '+' || d.s[d.i] == '-') {
			d.i++
		}
		if !digits() {
			return nil, false
		}
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	if err != nil {
		return nil, false
	}
	return &f, true
}

// strLen reads a string of min to max runes.
func (d *argScanner) strLen(min, max int) (string, bool) {
	s, ok := d.str()
	if !ok {
		return "", false
	}
	if n := utf8.RuneCountInString(s); n < min || n > max {
		return "", false
	}
	return s, true
}

// str reads a string (jsonstr.Read): without escapes it is a slice of the
// text. It is not ok for invalid UTF-8 and lone surrogates, which
// encoding/json would read as U+FFFD.
func (d *argScanner) str() (string, bool) {
	d.ws()
	s, next, ok := jsonstr.Read(d.s, d.i)
	if !ok {
		return "", false
	}
	d.i = next
	return s, true
}
