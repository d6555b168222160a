package hostprocess

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestTerminationMessage(t *testing.T) {
	dir := t.TempDir()
	msgPath, logPath := filepath.Join(dir, "msg"), filepath.Join(dir, "0.log")
	write := func(path, data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(logPath, strings.Repeat("old line\n", 100)+"last words")
	c := &v1.Container{TerminationMessagePath: msgPath, TerminationMessagePolicy: v1.TerminationMessageFallbackToLogsOnError}

	write(msgPath, "stale") // written before the instance started
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(msgPath, old, old); err != nil {
		t.Fatal(err)
	}
	src := newTerminationSource(c)
	got := src.message(1, logPath)
	if strings.Contains(got, "stale") || !strings.HasSuffix(got, "last words") || strings.Count(got, "\n") != 79 {
		t.Errorf("a file not written since the start and a failed exit: message %q, want the log's last 80 lines, not the stale file", got)
	}
	if got := src.message(0, logPath); got != "" {
		t.Errorf("a file not written since the start and exit 0: message %q, want none", got)
	}

	write(msgPath, "DONE")
	if got := src.message(1, logPath); got != "DONE" {
		t.Errorf("a file written since the start: message %q, want \"DONE\"", got)
	}
	write(msgPath, strings.Repeat("x", 5000))
	if got := src.message(0, logPath); len(got) != 4096 {
		t.Errorf("a 5000-byte message: got %d bytes, want the kubelet's 4096", len(got))
	}

	def := newTerminationSource(&v1.Container{TerminationMessagePath: v1.TerminationMessagePathDefault})
	if def.path != "" {
		t.Errorf("the API default %s is read on the host: %q", v1.TerminationMessagePathDefault, def.path)
	}
}
