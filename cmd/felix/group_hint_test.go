package main

import "testing"

// The ack hint after a poll names the consumer when it is not the
// default, since an ack must come from the consumer that holds the claims.
func TestTheAckHintNamesAConsumerThatIsNotTheDefault(t *testing.T) {
	if got := consumerFlag("felix-cli"); got != "" {
		t.Errorf("the default consumer's hint adds %q", got)
	}
	if got := consumerFlag("other"); got != " --consumer other" {
		t.Errorf("consumer other's hint adds %q, want --consumer other", got)
	}
}
