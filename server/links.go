package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/signing"
)

// maxLinkForm bounds the body of an action link's answer (a form).
const maxLinkForm = 64 << 10

// linkCSP is the Content-Security-Policy of an action link's pages: no
// script, no image, forms that post to this origin only.
const linkCSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// handleLink is GET /q/{id}?grant=G (docs/design.md §17, §29): the one
// question G names, for the person G names, without a session cookie. A
// pending question shows its form (with answer=<option id | approve |
// reject>, a confirmation of that answer: a GET never answers); a resolved
// one shows its receipt. A grant that does not verify, has expired, names
// another question, or names someone who may not answer it is 403. Without
// grant= the path is the page's own single-question route.
func (s *Server) handleLink(w http.ResponseWriter, r *http.Request) {
	grant := r.URL.Query().Get("grant")
	if !r.URL.Query().Has("grant") {
		s.servePage(w, r)
		return
	}
	id := r.PathValue("id")
	_, v, ok := s.linkQuestion(w, r, id, grant)
	if !ok {
		return
	}
	p := s.linkPage(id, grant, v)
	if v.Status == api.StatusPending {
		if ans := r.URL.Query().Get("answer"); ans != "" {
			p.Confirm = confirmation(&v.Request, ans)
		}
	}
	s.renderLink(w, http.StatusOK, p)
}

// handleLinkAnswer is POST /q/{id} (a form with grant and the answer): it
// answers the question once through the one resolve transition, as the
// grant's person (Surface "link"), and sends the browser to the receipt
// (303 to the GET). A question already resolved is 403 with its receipt;
// an answer that breaks the question is 422 with the form and what is
// wrong, and the question stays pending.
func (s *Server) handleLinkAnswer(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxLinkForm)
	if err := r.ParseForm(); err != nil {
		s.renderLink(w, http.StatusBadRequest, &linkView{Heading: "This answer could not be read", Problem: err.Error()})
		return
	}
	id, grant := r.PathValue("id"), r.PostForm.Get("grant")
	g, v, ok := s.linkQuestion(w, r, id, grant)
	if !ok {
		return
	}
	if v.Status != api.StatusPending {
		p := s.linkPage(id, grant, v)
		p.Heading, p.Problem = "Already answered", "This question was answered before; its receipt is below."
		s.renderLink(w, http.StatusForbidden, p)
		return
	}
	_, err := s.opts.Runner.Resolve(r.Context(), agent.ResolveParams{By: g.Person, RequestID: id, Answer: formAnswer(r.PostForm, &v.Request),
		Surface: agent.SurfaceLink})
	var already *agent.AlreadyResolvedError
	var expired *agent.InteractionExpiredError
	var invalid *askuser.AnswerError
	switch {
	case err == nil:
		http.Redirect(w, r, s.linkPath(id, grant, ""), http.StatusSeeOther)
	case errors.As(err, &already), errors.As(err, &expired):
		rc := receiptOfErr(already, expired)
		p := s.linkPage(id, grant, &api.InteractionView{Request: v.Request, Status: rc.Status, Receipt: rc})
		p.Heading, p.Problem = "Already answered", "This question was resolved before your answer arrived; its receipt is below."
		if expired != nil {
			p.Heading, p.Problem = "Expired", "This question expired before your answer arrived."
		}
		s.renderLink(w, http.StatusForbidden, p)
	case errors.As(err, &invalid):
		p := s.linkPage(id, grant, v)
		p.Problem, p.Details = "The answer does not fit the question; nothing was answered.", invalid.Details
		s.renderLink(w, http.StatusUnprocessableEntity, p)
	case notYours(err):
		s.renderLink(w, http.StatusForbidden, &linkView{Heading: "Not yours to answer", Problem: "This link does not let you answer this question."})
	case errors.Is(err, agent.ErrNotResumable):
		s.renderLink(w, http.StatusConflict, &linkView{Heading: "Cannot be answered", Problem: "This question can no longer be answered: what asked it has ended."})
	default:
		s.log.Error("action link answer", "requestId", id, "err", err)
		s.renderLink(w, http.StatusInternalServerError, &linkView{Heading: "Something went wrong", Problem: "The answer could not be recorded; try again."})
	}
}

// handleLinkReceipt is GET /q/{id}/receipt?grant=G: the resolved
// question's receipt as a JSON download (what `luban verify` checks).
func (s *Server) handleLinkReceipt(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	_, v, ok := s.linkQuestion(w, r, id, r.URL.Query().Get("grant"))
	if !ok {
		return
	}
	if v.Receipt == nil {
		s.renderLink(w, http.StatusNotFound, &linkView{Heading: "No receipt yet", Problem: "This question is still waiting for an answer."})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", "receipt-"+id+".json"))
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	_ = json.NewEncoder(w).Encode(v.Receipt)
}

func receiptOfErr(a *agent.AlreadyResolvedError, e *agent.InteractionExpiredError) *api.Receipt {
	if a != nil && a.Receipt != nil {
		return a.Receipt
	}
	if e != nil && e.Receipt != nil {
		return e.Receipt
	}
	return &api.Receipt{Status: api.StatusExpired}
}

// linkQuestion checks grant for question id and reads the question as the
// grant's person may see it; on any failure it writes the 403 page and
// returns false.
func (s *Server) linkQuestion(w http.ResponseWriter, r *http.Request, id, grant string) (*signing.Grant, *api.InteractionView, bool) {
	g, err := s.opts.Keys.VerifyGrant(grant, id, time.Now())
	if err != nil {
		s.renderLink(w, http.StatusForbidden, &linkView{Heading: "This link does not work", Problem: linkProblem(err)})
		return nil, nil, false
	}
	v, err := s.opts.Runner.Question(r.Context(), g.Person, id)
	if notYours(err) {
		s.renderLink(w, http.StatusForbidden, &linkView{Heading: "Not yours to answer", Problem: "This link does not let you answer this question (it was given to someone else, or the question is gone)."})
		return nil, nil, false
	}
	if err != nil {
		s.log.Error("action link", "requestId", id, "err", err)
		s.renderLink(w, http.StatusInternalServerError, &linkView{Heading: "Something went wrong", Problem: "The question could not be read; try again."})
		return nil, nil, false
	}
	return g, v, true
}

// notYours reports whether err says the grant's person may not see or
// answer the question: not found for them, or any 403 of errorFor (who may
// answer is mayAnswer's decision, docs/design.md §16).
func notYours(err error) bool {
	if errors.Is(err, agent.ErrInteractionNotFound) || errors.Is(err, agent.ErrSessionNotFound) {
		return true
	}
	status, _ := errorFor(err)
	return status == http.StatusForbidden
}

// linkProblem words why a grant was refused, for the person holding it.
func linkProblem(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "expired"):
		return "This link has expired, with the question it was for."
	case strings.Contains(msg, "another question"):
		return "This link is for another question."
	}
	return "This link is not valid (it was changed or cut short, or it is not from this server)."
}

// ActionLinks returns what makes action links for this server's questions
// (signing.Links, docs/design.md §17): grants signed with Options.Keys, URLs on
// Options.PublicURL. Nil without Keys or PublicURL.
func (s *Server) ActionLinks() *signing.Links {
	if s.opts.Keys == nil || s.opts.PublicURL == "" {
		return nil
	}
	return &signing.Links{Keys: s.opts.Keys, Base: s.opts.PublicURL, ExpiresAt: s.opts.Runner.QuestionExpiry}
}

// linkPath is the path of question id's link with grant (and answer).
func (s *Server) linkPath(id, grant, answer string) string {
	q := url.Values{"grant": {grant}}
	if answer != "" {
		q.Set("answer", answer)
	}
	return "/q/" + url.PathEscape(id) + "?" + q.Encode()
}

// linkView is what the action link template shows.
type linkView struct {
	Heading string
	// Problem, when set, says what went wrong; Details are an answer's
	// field errors.
	Problem string
	Details []api.FieldError
	// Req is the question (nil on a page without one).
	Req     *api.InputRequest
	Pending bool
	Kind    string // "approval", "questions", "choice", "text", "elicitation"
	Multi   bool   // choice: several options may be chosen
	Args    string // an approval's arguments, indented
	Action  string // the form's action
	Grant   string
	Confirm *linkConfirm
	Receipt *linkReceipt
}

// linkConfirm is the confirmation of one answer given in the link's URL.
type linkConfirm struct {
	Label        string // what the answer says, for the person
	Field, Value string // the form field that carries it
}

// linkReceipt is a receipt as the link shows it.
type linkReceipt struct {
	Status, Decision string
	Chosen           []string // the labels of the selections
	CustomInput      string
	Answers          []api.QuestionAnswer
	Message          string
	At               string
	Signature        string
	DownloadURL      string
}

func (s *Server) linkPage(id, grant string, v *api.InteractionView) *linkView {
	req := &v.Request
	p := &linkView{Heading: req.Title, Req: req, Pending: v.Status == api.StatusPending, Action: "/q/" + url.PathEscape(id), Grant: grant}
	switch {
	case req.Tool == api.ToolApproval:
		p.Kind = "approval"
		p.Args = prettyArgs(req.Arguments)
	case req.Tool == api.ToolElicitation:
		p.Kind = "elicitation"
	case req.Mode == api.ModeQuestions:
		p.Kind = "questions"
	case req.Mode == api.ModeSingle || req.Mode == api.ModeMultiple || req.Mode == api.ModeToggle:
		p.Kind, p.Multi = "choice", req.Mode != api.ModeSingle
	default:
		p.Kind = "text"
	}
	if rc := v.Receipt; rc != nil {
		lr := &linkReceipt{Status: string(rc.Status), Decision: string(rc.Decision), CustomInput: rc.CustomInput, Answers: rc.Answers,
			Message: rc.Message, At: rc.ResolvedAt.UTC().Format("2006-01-02 15:04:05 UTC"), Signature: rc.Signature}
		for _, sel := range rc.Selections {
			label := sel
			for _, o := range req.Options {
				if o.ID == sel {
					label = o.Label
				}
			}
			lr.Chosen = append(lr.Chosen, label)
		}
		if rc.Signature != "" {
			lr.DownloadURL = "/q/" + url.PathEscape(id) + "/receipt?" + url.Values{"grant": {grant}}.Encode()
		}
		p.Receipt = lr
	}
	return p
}

// prettyArgs is an approval's arguments as a person reads them: indented,
// key order kept, and the \u003c, \u003e and \u0026 escapes that Go's
// encoder writes for <, > and & shown as those characters (an escaped
// backslash before them is left alone). The page escapes the text.
func prettyArgs(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	in := b.String()
	var out strings.Builder
	for i := 0; i < len(in); i++ {
		if in[i] == '\\' && i+1 < len(in) {
			if in[i+1] == 'u' && i+6 <= len(in) {
				switch in[i+2 : i+6] {
				case "003c":
					out.WriteByte('<')
					i += 5
					continue
				case "003e":
					out.WriteByte('>')
					i += 5
					continue
				case "0026":
					out.WriteByte('&')
					i += 5
					continue
				}
			}
			out.WriteString(in[i : i+2])
			i++
			continue
		}
		out.WriteByte(in[i])
	}
	return out.String()
}

// confirmation is the confirmation page of answer ans given in a link
// (answer=): an option id of a single-choice question, or approve or
// reject of an approval. Anything else shows the whole form.
func confirmation(req *api.InputRequest, ans string) *linkConfirm {
	switch {
	case req.Tool == api.ToolApproval && (ans == string(api.DecisionApprove) || ans == string(api.DecisionReject)):
		label := "Approve: run " + req.ToolName + " with the arguments below"
		if ans == string(api.DecisionReject) {
			label = "Reject: do not run " + req.ToolName
		}
		return &linkConfirm{Label: label, Field: "decision", Value: ans}
	case req.Tool != api.ToolApproval && req.Tool != api.ToolElicitation && req.Mode == api.ModeSingle:
		for _, o := range req.Options {
			if o.ID == ans {
				return &linkConfirm{Label: o.Label, Field: "selections", Value: o.ID}
			}
		}
	}
	return nil
}

// formAnswer turns an action link's form into the one answer body: an
// approval's decision (and a reject's message), an AskUser question's
// selected labels and other text (fields q0, q0.other, …), a question's
// selections and customInput, or cancelled.
func formAnswer(f url.Values, req *api.InputRequest) api.ContinueRequest {
	var b api.ContinueRequest
	if f.Get("cancelled") != "" {
		b.Cancelled = true
		return b
	}
	switch {
	case req.Tool == api.ToolApproval, req.Tool == api.ToolElicitation:
		b.Decision, b.Message = api.Decision(f.Get("decision")), f.Get("message")
	case req.Mode == api.ModeQuestions:
		for i, q := range req.Questions {
			sel := f[fmt.Sprintf("q%d", i)]
			if sel == nil {
				sel = []string{}
			}
			b.Answers = append(b.Answers, api.QuestionAnswer{Question: q.Question, Selected: sel, Other: f.Get(fmt.Sprintf("q%d.other", i))})
		}
	default:
		b.Selections = f["selections"]
		if b.Selections == nil {
			b.Selections = []string{}
		}
		b.CustomInput = f.Get("customInput")
	}
	return b
}

func (s *Server) renderLink(w http.ResponseWriter, status int, p *linkView) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", linkCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// The grant is in the URL: it must not leave in a Referer.
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := linkTemplate.Execute(w, p); err != nil {
		s.log.Error("action link page", "err", err)
	}
}

var linkTemplate = template.Must(template.New("link").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>{{if .Heading}}{{.Heading}} · {{end}}luban</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.3rem}.muted{color:#59636e}.problem{background:#fff1f0;border:1px solid #f5c2c0;padding:.6rem .8rem;border-radius:6px}
pre,textarea.jws{background:#f6f8fa;padding:.6rem;border-radius:6px;overflow:auto;font-size:.85rem;width:100%;box-sizing:border-box}
fieldset{border:1px solid #d1d9e0;border-radius:6px;margin:0 0 1rem}label{display:block;margin:.3rem 0}
button{font:inherit;padding:.4rem 1rem;margin:.5rem .5rem 0 0;border-radius:6px;border:1px solid #d1d9e0;background:#f6f8fa;cursor:pointer}
button.primary{background:#1f883d;color:#fff;border-color:#1f883d}.receipt{border:1px solid #d1d9e0;border-radius:6px;padding:.8rem}
.signed{display:inline-block;background:#dafbe1;color:#116329;border-radius:1rem;padding:0 .6rem;font-size:.85rem}
</style></head><body>
<p class="muted">luban · a question for you</p>
<h1>{{.Heading}}</h1>
{{with .Problem}}<p class="problem" role="alert">{{.}}</p>{{end}}
{{range .Details}}<p class="problem">{{if .Field}}{{.Field}}: {{end}}{{.Message}}</p>{{end}}
{{with .Req}}{{with .Description}}<p>{{.}}</p>{{end}}{{end}}
{{if and .Req (eq .Kind "approval")}}<p>Tool <code>{{.Req.ToolName}}</code> with these arguments:</p><pre>{{.Args}}</pre>{{end}}
{{if .Receipt}}{{with .Receipt}}<section class="receipt" aria-label="receipt">
<p><strong>{{if .Decision}}{{.Decision}}{{else}}{{.Status}}{{end}}</strong> · {{.At}}
{{if .Signature}} · <span class="signed" title="Ed25519 signature, verifiable with the server's public keys (/.well-known/luban/keys) or luban verify">signed</span>{{end}}</p>
{{range .Chosen}}<p>Chosen: {{.}}</p>{{end}}
{{with .CustomInput}}<p>Answer: {{.}}</p>{{end}}
{{range .Answers}}<p>{{.Question}}: {{range $i, $s := .Selected}}{{if $i}}, {{end}}{{$s}}{{end}}{{with .Other}} {{.}}{{end}}</p>{{end}}
{{with .Message}}<p>Message: {{.}}</p>{{end}}
{{if .Signature}}<details><summary>Signature (JWS)</summary><textarea class="jws" readonly rows="5" aria-label="signature">{{.Signature}}</textarea>
<p><a href="{{.DownloadURL}}" download>Download the receipt</a> and check it with <code>luban verify receipt.json</code>.</p></details>{{end}}
</section>{{end}}{{else if .Pending}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="grant" value="{{.Grant}}">
{{if .Confirm}}<p>Your answer: <strong>{{.Confirm.Label}}</strong></p>
<input type="hidden" name="{{.Confirm.Field}}" value="{{.Confirm.Value}}">
<button class="primary" type="submit">Confirm</button>
{{else if eq .Kind "approval"}}<label>Message (with a reject) <textarea name="message" rows="2"></textarea></label>
<button class="primary" name="decision" value="approve" type="submit">Approve</button><button name="decision" value="reject" type="submit">Reject</button>
{{else if eq .Kind "elicitation"}}<p>This form is answered in luban itself; here you can decline it.</p>
<button name="decision" value="decline" type="submit">Decline</button>
{{else if eq .Kind "questions"}}{{range $i, $q := .Req.Questions}}<fieldset><legend>{{$q.Header}}</legend><p>{{$q.Question}}</p>
{{range $q.Options}}<label><input type="{{if $q.MultiSelect}}checkbox{{else}}radio{{end}}" name="q{{$i}}" value="{{.Label}}"> {{.Label}}{{with .Description}} <span class="muted">— {{.}}</span>{{end}}</label>{{end}}
<label>Other <input name="q{{$i}}.other"></label></fieldset>{{end}}
<button class="primary" type="submit">Answer</button>
{{else if eq .Kind "choice"}}<fieldset>{{range .Req.Options}}<label><input type="{{if $.Multi}}checkbox{{else}}radio{{end}}" name="selections" value="{{.ID}}"> {{.Label}}{{with .Description}} <span class="muted">— {{.}}</span>{{end}}</label>{{end}}
{{if .Req.AllowCustom}}<label>Other <input name="customInput"></label>{{end}}</fieldset>
<button class="primary" type="submit">{{if .Req.SubmitLabel}}{{.Req.SubmitLabel}}{{else}}Answer{{end}}</button>
{{else}}<label>Your answer <input name="customInput"></label>
<button class="primary" type="submit">{{if .Req.SubmitLabel}}{{.Req.SubmitLabel}}{{else}}Answer{{end}}</button>
{{end}}
</form>
{{if not .Confirm}}<form method="post" action="{{.Action}}"><input type="hidden" name="grant" value="{{.Grant}}"><input type="hidden" name="cancelled" value="1"><button type="submit">Decline to answer</button></form>{{end}}
{{end}}
</body></html>
`))
