package devices

import (
	"regexp"
	"testing"
)

// The caller's Answers keep their backing array: a session adds the profile's answers to a copy.
func TestLoginAnswersDoNotWriteIntoTheCallersSlice(t *testing.T) {
	sentinel := Answer{Prompt: regexp.MustCompile(`^sentinel$`), Reply: "untouched"}
	backing := make([]Answer, 64) // room for every profile answer after the caller's one
	for i := range backing {
		backing[i] = sentinel
	}
	s := &Session{opts: Options{Answers: backing[:1]}, profile: profiles["cisco_ios"]}
	var logins int
	handled, err := s.answerLogin("a line no answer applies to", &logins)
	if err != nil || handled {
		t.Fatalf("answerLogin = %v, %v", handled, err)
	}
	for i, a := range backing[1:] {
		if a.Reply != "untouched" || a.Prompt != sentinel.Prompt {
			t.Fatalf("the caller's array was overwritten at %d: %+v", i+1, a)
		}
	}
}
