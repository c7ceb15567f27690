package askuser_test

import (
	"errors"
	"fmt"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
)

// The life of one ask_user call: validate what the model sent, validate what
// the person answered, and build the ToolResult of the original call.
func Example() {
	prompt, err := askuser.ParseArgs(api.ToolAskUser, `{
		"title": "请选择执行方式",
		"mode": "single",
		"options": [
			{"id": "safe", "label": "先分析", "recommended": true},
			{"id": "implement", "label": "直接实现"}
		]
	}`)
	if err != nil {
		panic(err)
	}

	answer, err := askuser.ValidateAnswer(prompt, api.Answer{Selections: []string{"safe"}}, askuser.AnswerOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(askuser.AnsweredResult(prompt, answer).Content)
	fmt.Printf("%+v\n", askuser.Summarize(prompt, answer))
	// Output:
	// {"selections":["safe"],"customInput":"","cancelled":false,"labels":["先分析"]}
	// {Mode:single Selections:[safe] SelectionCount:1 CustomInputLen:0 CustomInputSHA256: AnswerCount:0 Cancelled:false}
}

// Invalid arguments never reach the user: the model gets one sentence naming
// the field and the rule, as an error ToolResult, and may try again.
func ExampleParseArgs() {
	_, err := askuser.ParseArgs(api.ToolAskUser, `{"title":"t","mode":"single","options":"[{\"id\":\"a\",\"label\":\"A\"},{\"id\":\"a\",\"label\":\"B\"}]"}`)
	fmt.Println(err)

	_, err = askuser.ParseArgs(api.ToolAskUserBatch, `{"questions":[{"question":"Which database?","header":"DB",
		"options":[{"label":"SQLite","description":""},{"label":"Other","description":""}]}]}`)
	var ae *askuser.ArgsError
	if errors.As(err, &ae) {
		fmt.Println(ae.Path)
		fmt.Println(ae.Rule)
	}
	// Output:
	// options[1].id: duplicate of options[0].id
	// questions[0].options[1].label
	// do not add an "Other" option: the user can always answer in their own words
}

// A rejected answer lists one detail per problem, for a 422 invalid_answer.
func ExampleValidateAnswer() {
	prompt, _ := askuser.ParseArgs(api.ToolAskUser, `{"title":"截止日期","mode":"date"}`)
	_, err := askuser.ValidateAnswer(prompt, api.Answer{CustomInput: "2023-02-29"}, askuser.AnswerOptions{})
	var ae *askuser.AnswerError
	if errors.As(err, &ae) {
		for _, d := range ae.Details {
			fmt.Printf("%s: %s\n", d.Field, d.Message)
		}
	}
	// Output:
	// customInput: "2023-02-29" is not a real calendar day
}

// An AskUser batch answers with labels per question; the model reads the
// output and programs read the metadata.
func ExampleAnsweredResult_askUser() {
	prompt, _ := askuser.ParseArgs(api.ToolAskUserBatch, `{"questions":[{"question":"Which database?","header":"DB",
		"options":[{"label":"SQLite (Recommended)","description":"embedded"},{"label":"PostgreSQL","description":"server"}]}]}`)
	answer, _ := askuser.ValidateAnswer(prompt, api.Answer{Answers: []api.QuestionAnswer{
		{Question: "Which database?", Selected: []string{"PostgreSQL"}},
	}}, askuser.AnswerOptions{})
	r := askuser.AnsweredResult(prompt, answer)
	fmt.Println(r.Content)
	fmt.Println(string(r.Metadata))
	// Output:
	// The user answered your questions:
	// 1. Which database?
	//    Selected: "PostgreSQL"
	// Continue the task with these answers.
	// {"answers":[{"question":"Which database?","selected":["PostgreSQL"],"other":""}]}
}

// Cancel and expiry end the run; the model is told so in the agreed shape.
func ExampleCancelledResult() {
	prompt, _ := askuser.ParseArgs(api.ToolAskUser, `{"title":"t","mode":"text"}`)
	fmt.Println(askuser.CancelledResult(prompt).Content)
	fmt.Println(askuser.ExpiredResult(prompt).Content)
	// Output:
	// {"selections":[],"customInput":"","cancelled":true}
	// {"selections":[],"customInput":"","cancelled":true,"expired":true}
}
