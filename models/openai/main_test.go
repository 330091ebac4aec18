package openai_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a handler of the
// fake, a stream reader of the client) outlives them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
