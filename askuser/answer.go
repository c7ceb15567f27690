package askuser

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
)

// AnswerError is returned by ValidateAnswer when an answer breaks its
// request. Details holds one FieldError per problem, in the order of the
// answer's fields; it is never empty. A rejected answer consumes nothing: the
// request stays pending (docs/design.md §4).
type AnswerError struct {
	Details []api.FieldError
}

// Error joins the details: "invalid answer: selections[0]: ...; customInput: ...".
func (e *AnswerError) Error() string {
	parts := make([]string, len(e.Details))
	for i, d := range e.Details {
		parts[i] = d.Field + ": " + d.Message
	}
	return "invalid answer: " + strings.Join(parts, "; ")
}

// AnswerOptions configures answer validation. The zero value is valid and
// rejects every directory answer.
type AnswerOptions struct {
	// Workspace is the absolute root that directory answers must stay inside
	// (luban serve --workspace, docs/design.md §8). Empty means the directory mode
	// rejects every answer with a message saying no workspace is configured.
	Workspace string
}

// ValidateAnswer checks what a person sent against the prompt they were shown
// (issue 2 §3, docs/design.md §A.3 UserInputCard rules) and returns the normalized
// answer.
//
// With a.Cancelled nothing is validated (docs/design.md §4: a cancel is never
// validated against the form) and the result is a clean cancel: empty
// selections, empty customInput, Cancelled true.
//
// ask_user, by mode:
//   - single: exactly one known option id; or, with allowCustom, no id and a
//     non-blank customInput.
//   - multiple: any number of distinct known ids, zero included. An explicit
//     [] is a valid answer and is never replaced by the recommended options.
//   - toggle: at least one distinct known id.
//   - text: a non-blank customInput. Blank means nothing visible: white
//     space, zero-width and other format or control characters only.
//   - number: a finite decimal number written in full in customInput: 42,
//     -3.5, 1e3, .5 (the grammar of an HTML number input, plus a fraction
//     without its leading zero as browsers submit it); 42xyz, NaN, Inf, empty
//     and values beyond float64 are rejected. Surrounding spaces are trimmed
//     and a negative zero (-0, -0.0) loses its sign; otherwise the string is
//     kept as written. With the prompt's integer, a number with a fraction is
//     refused (invalid_type, expected integer); below its minimum or above
//     its maximum, out_of_range with {min} or {max}.
//   - date: a real calendar day YYYY-MM-DD (year 0001–9999), kept as the same
//     string with no time-zone conversion.
//   - directory: a path relative to opts.Workspace that stays inside it after
//     cleaning and resolving symbolic links; customInput is replaced by the
//     cleaned relative path with forward slashes ("." for the root). See
//     AnswerOptions.
//
// Choice modes (single, multiple, toggle) accept a customInput only with
// allowCustom; free-input modes accept no selections. customInput is at most
// MaxCustomInput characters in every mode.
//
// AskUser (AgentScope AskUserMetadata): a.Answers holds one
// {question, selected: [labels], other} per question, matched by question
// text and returned in the prompt's question order; labels are known and
// distinct; a single-select question takes at most one label and, without
// one, a non-blank other; each other is at most MaxCustomInput characters;
// selections and customInput stay empty.
//
// On success the returned Answer has non-nil Selections (and non-nil Selected
// in every QuestionAnswer). On failure the error is a *AnswerError.
func ValidateAnswer(p *api.Prompt, a api.Answer, opts AnswerOptions) (api.Answer, error) {
	if p == nil {
		return api.Answer{}, &AnswerError{Details: []api.FieldError{{Field: "requestId", Code: api.DetailNoQuestion, Message: "there is no question to answer"}}}
	}
	if a.Cancelled {
		return api.Answer{Selections: []string{}, Cancelled: true}, nil
	}
	v := answerValidator{}
	var out api.Answer
	if p.Tool == api.ToolAskUserBatch || p.Mode == api.ModeQuestions {
		out = v.questions(p, a)
	} else {
		out = v.askUser(p, a, opts)
	}
	if len(v.details) > 0 {
		return api.Answer{}, &AnswerError{Details: v.details}
	}
	return out, nil
}

type answerValidator struct {
	details []api.FieldError
}

// add records a problem of field with its code and params (nil for none).
func (v *answerValidator) add(field string, code api.FieldCode, params map[string]any, format string, args ...any) {
	v.details = append(v.details, api.FieldError{Field: field, Code: code, Params: params, Message: fmt.Sprintf(format, args...)})
}

// addProblem records a checker's problem of field.
func (v *answerValidator) addProblem(field string, p *problem) {
	v.details = append(v.details, api.FieldError{Field: field, Code: p.code, Params: p.params, Message: p.msg})
}

// problem is what a checker found wrong with one value: its FieldError
// without the field.
type problem struct {
	code   api.FieldCode
	params map[string]any
	msg    string
}

func newProblem(code api.FieldCode, params map[string]any, format string, args ...any) *problem {
	return &problem{code: code, params: params, msg: fmt.Sprintf(format, args...)}
}

// tooLong is the params of a text longer than max characters.
func tooLong(got, max int) map[string]any {
	return map[string]any{"max": max, "got": got, "unit": "characters"}
}

func (v *answerValidator) askUser(p *api.Prompt, a api.Answer, opts AnswerOptions) api.Answer {
	out := api.Answer{Selections: []string{}, CustomInput: a.CustomInput}
	if a.Selections != nil {
		out.Selections = append(out.Selections, a.Selections...)
	}
	if len(a.Answers) > 0 {
		v.add("answers", api.DetailConflictWithKind, nil, "answers are only for AskUser questions; this is an ask_user %s request", p.Mode)
	}
	if n := utf8.RuneCountInString(a.CustomInput); n > MaxCustomInput {
		v.add("customInput", api.DetailTooLong, tooLong(n, MaxCustomInput), "too long: %d characters, at most %d", n, MaxCustomInput)
		return out
	}
	switch p.Mode {
	case api.ModeSingle, api.ModeMultiple, api.ModeToggle:
		v.choice(p, a)
	case api.ModeText, api.ModeNumber, api.ModeDate, api.ModeDirectory:
		if len(a.Selections) > 0 {
			v.add("selections", api.DetailNotAllowed, nil, "mode %s takes no selections, got %d", p.Mode, len(a.Selections))
		}
		switch p.Mode {
		case api.ModeText:
			if isBlank(a.CustomInput) {
				v.add("customInput", api.DetailRequired, nil, "enter some text")
			}
		case api.ModeNumber:
			if s, pr := checkNumber(a.CustomInput); pr != nil {
				v.addProblem("customInput", pr)
			} else if pr := checkBounds(p, s); pr != nil {
				v.addProblem("customInput", pr)
			} else {
				out.CustomInput = s
			}
		case api.ModeDate:
			if pr := checkDate(a.CustomInput); pr != nil {
				v.addProblem("customInput", pr)
			}
		case api.ModeDirectory:
			if rel, pr := checkDirectory(opts.Workspace, a.CustomInput); pr != nil {
				v.addProblem("customInput", pr)
			} else {
				out.CustomInput = rel
			}
		}
	default:
		v.add("mode", api.DetailInvalid, nil, "unknown mode %q", p.Mode)
	}
	return out
}

// choice validates single, multiple and toggle answers.
func (v *answerValidator) choice(p *api.Prompt, a api.Answer) {
	known := make(map[string]bool, len(p.Options))
	for _, o := range p.Options {
		known[o.ID] = true
	}
	seen := map[string]int{}
	for i, id := range a.Selections {
		field := fmt.Sprintf("selections[%d]", i)
		if !known[id] {
			v.add(field, api.DetailUnknownOption, map[string]any{"option": clip(id)}, "unknown option id %q", id)
			continue
		}
		if j, dup := seen[id]; dup {
			v.add(field, api.DetailDuplicate, map[string]any{"of": fmt.Sprintf("selections[%d]", j), "option": clip(id)}, "duplicate of selections[%d]", j)
			continue
		}
		seen[id] = i
	}
	custom := !isBlank(a.CustomInput)
	if custom && !p.AllowCustom {
		v.add("customInput", api.DetailNotAllowed, nil, "this question does not accept custom input (allowCustom is false)")
	}
	n := len(a.Selections)
	switch p.Mode {
	case api.ModeSingle:
		switch {
		case n > 1:
			v.add("selections", api.DetailTooMany, map[string]any{"max": 1, "got": n}, "choose exactly one option, got %d", n)
		case n == 0 && p.AllowCustom && !custom:
			v.add("selections", api.DetailRequired, nil, "choose one option or write an answer in customInput")
		case n == 0 && !p.AllowCustom:
			v.add("selections", api.DetailTooFew, map[string]any{"min": 1, "got": 0}, "choose exactly one option, got none")
		}
	case api.ModeToggle:
		if n == 0 {
			v.add("selections", api.DetailTooFew, map[string]any{"min": 1, "got": 0}, "switch on at least one option")
		}
	}
}

// questions validates AskUser answers.
func (v *answerValidator) questions(p *api.Prompt, a api.Answer) api.Answer {
	out := api.Answer{Selections: []string{}}
	if len(a.Selections) > 0 {
		v.add("selections", api.DetailConflictWithKind, nil, "AskUser answers go in answers, not selections")
	}
	if a.CustomInput != "" {
		v.add("customInput", api.DetailConflictWithKind, nil, "AskUser answers go in answers[].other, not customInput")
	}
	index := make(map[string]int, len(p.Questions))
	for i, q := range p.Questions {
		index[q.Question] = i
	}
	byQuestion := make([]*api.QuestionAnswer, len(p.Questions))
	for i := range a.Answers {
		qa := &a.Answers[i]
		field := fmt.Sprintf("answers[%d]", i)
		qi, ok := index[qa.Question]
		if !ok {
			v.add(field+".question", api.DetailUnknownQuestion, map[string]any{"question": clip(qa.Question)}, "unknown question %q", qa.Question)
			continue
		}
		if byQuestion[qi] != nil {
			v.add(field+".question", api.DetailDuplicate, map[string]any{"question": clip(qa.Question)}, "a second answer to question %q", qa.Question)
			continue
		}
		byQuestion[qi] = qa
		v.questionAnswer(field, p.Questions[qi], qa)
	}
	for i, q := range p.Questions {
		if byQuestion[i] == nil {
			v.add("answers", api.DetailRequired, map[string]any{"question": clip(q.Question)}, "missing an answer to question %q", q.Question)
		}
	}
	for i, qa := range byQuestion {
		if qa == nil {
			continue
		}
		selected := append([]string{}, qa.Selected...)
		out.Answers = append(out.Answers, api.QuestionAnswer{Question: p.Questions[i].Question, Selected: selected, Other: qa.Other})
	}
	return out
}

func (v *answerValidator) questionAnswer(field string, q api.Question, qa *api.QuestionAnswer) {
	known := make(map[string]bool, len(q.Options))
	for _, o := range q.Options {
		known[o.Label] = true
	}
	seen := map[string]int{}
	for k, label := range qa.Selected {
		f := fmt.Sprintf("%s.selected[%d]", field, k)
		if !known[label] {
			v.add(f, api.DetailUnknownOption, map[string]any{"option": clip(label)}, "unknown option label %q", label)
			continue
		}
		if j, dup := seen[label]; dup {
			v.add(f, api.DetailDuplicate, map[string]any{"of": fmt.Sprintf("%s.selected[%d]", field, j), "option": clip(label)}, "duplicate of %s.selected[%d]", field, j)
			continue
		}
		seen[label] = k
	}
	if n := utf8.RuneCountInString(qa.Other); n > MaxCustomInput {
		v.add(field+".other", api.DetailTooLong, tooLong(n, MaxCustomInput), "too long: %d characters, at most %d", n, MaxCustomInput)
	}
	if !q.MultiSelect {
		switch n := len(qa.Selected); {
		case n > 1:
			v.add(field+".selected", api.DetailTooMany, map[string]any{"max": 1, "got": n}, "choose at most one option, got %d", n)
		case n == 0 && isBlank(qa.Other):
			v.add(field+".selected", api.DetailRequired, nil, "choose one option or write an answer in other")
		}
	}
}

// numberGrammar is an HTML "valid floating-point number" (docs/design.md §A.3: number
// renders input[type=number]), widened to what browsers submit from such an
// input: a fraction without its leading zero (".5", "-.5").
var numberGrammar = regexp.MustCompile(`^-?([0-9]+(\.[0-9]+)?|\.[0-9]+)([eE][-+]?[0-9]+)?$`)

// checkNumber returns the number in its canonical decimal form (decimal,
// below), or the problem. A nonzero number too small for a float64 is out
// of range, like one too large.
func checkNumber(s string) (string, *problem) {
	t := strings.TrimSpace(s)
	if t == "" {
		return "", newProblem(api.DetailRequired, nil, "enter a number")
	}
	if !numberGrammar.MatchString(t) {
		return "", newProblem(api.DetailFormat, map[string]any{"format": "number"}, "%q is not a number written in full (like 42, -3.5 or 1e3)", clip(t))
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", newProblem(api.DetailOutOfRange, nil, "%q is out of range", clip(t))
	}
	t = decimal(t)
	if f == 0 && t != "0" {
		return "", newProblem(api.DetailOutOfRange, nil, "%q is out of range", clip(strings.TrimSpace(s)))
	}
	return t, nil
}

// decimal is the canonical form of a number matching numberGrammar, as the
// model and tools get it (docs/design.md §2): the same value written in
// digits without an exponent, a leading "0" before a fraction, no leading
// zeros, no trailing zeros after the point, and "0" for any zero ("1e3" is
// "1000", "-.50" is "-0.5", "1.5E-2" is "0.015", "-0" is "0"). The
// conversion is exact (digits are moved, never rounded through a float).
func decimal(t string) string {
	neg := strings.HasPrefix(t, "-")
	t = strings.TrimPrefix(t, "-")
	mant, exp := t, 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		mant = t[:i]
		// The caller parsed t as a float64 first, so the exponent fits.
		exp, _ = strconv.Atoi(strings.TrimPrefix(t[i+1:], "+"))
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	point := len(intPart) + exp
	switch {
	case point <= 0:
		intPart, frac = "0", strings.Repeat("0", -point)+digits
	case point >= len(digits):
		intPart, frac = digits+strings.Repeat("0", point-len(digits)), ""
	default:
		intPart, frac = digits[:point], digits[point:]
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	frac = strings.TrimRight(frac, "0")
	out := intPart
	if frac != "" {
		out += "." + frac
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return out
}

// checkBounds returns the problem unless the number s (checkNumber's) is
// within the prompt's minimum and maximum and, when it asks for one, whole.
func checkBounds(p *api.Prompt, s string) *problem {
	f, _ := strconv.ParseFloat(s, 64)
	if p.Integer && f != math.Trunc(f) {
		return newProblem(api.DetailInvalidType, map[string]any{"expected": "integer", "got": "number"}, "%s is not a whole number", clip(s))
	}
	if p.Minimum != nil && f < *p.Minimum {
		return newProblem(api.DetailOutOfRange, map[string]any{"min": *p.Minimum}, "%s is less than the minimum %v", clip(s), *p.Minimum)
	}
	if p.Maximum != nil && f > *p.Maximum {
		return newProblem(api.DetailOutOfRange, map[string]any{"max": *p.Maximum}, "%s is more than the maximum %v", clip(s), *p.Maximum)
	}
	return nil
}

var dateGrammar = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// checkDate returns the problem unless s is a real calendar day YYYY-MM-DD.
func checkDate(s string) *problem {
	date := map[string]any{"format": "date"}
	if s == "" {
		return newProblem(api.DetailRequired, nil, "enter a date as YYYY-MM-DD")
	}
	if !dateGrammar.MatchString(s) {
		return newProblem(api.DetailFormat, date, "%q is not a date written as YYYY-MM-DD", clip(s))
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil || d.Year() < 1 {
		return newProblem(api.DetailFormat, date, "%q is not a real calendar day", s)
	}
	return nil
}

// clip shortens s for a message to at most 40 characters.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	r := []rune(s)
	return string(r[:40]) + "…"
}
