package store_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

// crashDBEnv tells the test binary, run again as a child, to begin a turn
// in the database it names and then die without closing anything.
const crashDBEnv = "DESKHAND_STORE_TEST_CRASH_DB"

const crashExitCode = 3

// TestProcessCrashKeepsAcknowledgedTurn kills a real process after
// BeginTurn returned: with WAL and synchronous=NORMAL the committed turn
// and user message must survive (they are still in the -wal file, never
// checkpointed), and the next start marks the turn interrupted.
func TestProcessCrashKeepsAcknowledgedTurn(t *testing.T) {
	if path := os.Getenv(crashDBEnv); path != "" {
		beginTurnAndDie(t, path)
		return
	}
	path := filepath.Join(t.TempDir(), store.FileName)
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessCrashKeepsAcknowledgedTurn$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDBEnv+"="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != crashExitCode {
		t.Fatalf("child process: %v, want exit status %d; output:\n%s", err, crashExitCode, out)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Errorf("no WAL left by the crashed process (%v): the test proves nothing about recovery", err)
	}

	db := storetest.OpenAt(t, path)
	conv, err := db.Conversation(ctx, "conv")
	if err != nil {
		t.Fatalf("conversation after the crash: %v", err)
	}
	turn, user := crashFixture(conv)
	checkInterrupted(t, db, conv, turn, user)
}

func crashFixture(conv agent.Conversation) (agent.Turn, agent.Message) {
	return runningTurn(conv, "cut-short", at(100))
}

// beginTurnAndDie runs in the child process.
func beginTurnAndDie(t *testing.T, path string) {
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatalf("child: open: %v", err)
	}
	conv := createConversation(t, db, putAgent(t, db, "helper"), "conv")
	turn, user := crashFixture(conv)
	if err := db.BeginTurn(ctx, agent.TurnStart{Turn: turn, User: user})(); err != nil {
		t.Fatalf("child: BeginTurn: %v", err)
	}
	os.Exit(crashExitCode) // no EndTurn, no Close, no checkpoint
}
