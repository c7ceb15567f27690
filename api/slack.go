package api

// The action ids of the buttons of luban's Slack messages (docs/design.md
// §17): SlackActionAnswer answers the question with the button's value (a
// SlackButton in JSON); SlackActionOpen is the "Answer in luban" link
// button, whose click Slack reports too and luban ignores.
const (
	SlackActionAnswer = "luban_answer"
	SlackActionOpen   = "luban_open"
)

// SlackButton is the value of a SlackActionAnswer button: request R of
// session S, of kind K (SlackKindApproval: A is a Decision;
// SlackKindSingle: A is the option id of a single-choice ask_user).
type SlackButton struct {
	R string `json:"r"`
	S string `json:"s"`
	K string `json:"k"`
	A string `json:"a"`
}

// SlackButton kinds.
const (
	SlackKindApproval = "approval"
	SlackKindSingle   = "single"
)

// SlackInteractionsPath is the endpoint Slack sends a luban app's button
// clicks to (the app's Interactivity Request URL, docs/notifications.md).
const SlackInteractionsPath = "/api/slack/interactions"
