package conformance

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
)

// failStop ends a body whose test fail handler was called, as ginkgo.Fail
// would.
type failStop struct{}

// pollBase is a base with short waits whose fail handler records the
// message and stops the body.
func pollBase(messages *[]string) *base {
	b := &base{st: &settings{t: Timeouts{State: 80 * time.Millisecond, Poll: 5 * time.Millisecond, Stable: 60 * time.Millisecond}}}
	b.failHandler = func(message string, _ ...int) {
		*messages = append(*messages, message)
		panic(failStop{})
	}
	return b
}

// failureOf runs body and returns the message it failed with ("" if none).
func failureOf(t *testing.T, body func(b *base)) string {
	t.Helper()
	var messages []string
	b := pollBase(&messages)
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(failStop); !ok {
					panic(r)
				}
			}
		}()
		body(b)
	}()
	switch len(messages) {
	case 0:
		return ""
	case 1:
		return messages[0]
	}
	t.Fatalf("the body failed %d times: %q", len(messages), messages)
	return ""
}

var checkedTimes = regexp.MustCompile(`Checked (\d+) times, every 5ms, for `)

func TestEventuallyTimeoutSaysWhatWasAwaitedAndLastSeen(t *testing.T) {
	syncs := 0
	msg := failureOf(t, func(b *base) {
		b.eventually("pod ns/p: container bad restarted", func(g gomega.Gomega) {
			syncs++
			g.Expect(syncs).To(gomega.BeNumerically(">", 1_000_000), "container bad was not restarted after %d syncs: bad[c1 exited code=1]", syncs)
		})
	})
	if msg == "" {
		t.Fatal("eventually of a condition that never holds did not fail the spec")
	}
	want := fmt.Sprintf("pod ns/p: container bad restarted: not reached within 80ms; last seen: container bad was not restarted after %d syncs: bad[c1 exited code=1]", syncs)
	if got := firstLine(msg); got != want {
		t.Errorf("first line\n%q\nwant (what was awaited, then the last attempt's failure)\n%q", got, want)
	}
	m := checkedTimes.FindStringSubmatch(msg)
	if m == nil || m[1] != strconv.Itoa(syncs) {
		t.Errorf("the message does not say it checked %d times:\n%s", syncs, msg)
	}
	if !strings.Contains(msg, "poll_internal_test.go:") || !strings.Contains(msg, "to be >") {
		t.Errorf("the message lacks the location and Gomega's text of the last failed assertion:\n%s", msg)
	}
	if strings.Contains(msg, "Timed out after") {
		t.Errorf("the message still leads with Gomega's timeout:\n%s", msg)
	}
}

func TestEventuallyPasses(t *testing.T) {
	n := 0
	msg := failureOf(t, func(b *base) {
		b.eventually("third time lucky", func(g gomega.Gomega) {
			n++
			g.Expect(n).To(gomega.BeNumerically(">=", 3))
		})
	})
	if msg != "" || n != 3 {
		t.Errorf("eventually of a condition that holds at the third check: %d checks, failure %q; want 3 checks and no failure", n, msg)
	}
}

// A failure of the spec itself inside the check (SyncPod returned an error)
// is not retried: it fails the spec at once, with its own message.
func TestEventuallyStopsAtASpecFailure(t *testing.T) {
	n := 0
	msg := failureOf(t, func(b *base) {
		b.eventually("never", func(g gomega.Gomega) {
			n++
			b.fail("SyncPod of pod ns/p returned an unexpected error: boom")
		})
	})
	if n != 1 || msg != "SyncPod of pod ns/p returned an unexpected error: boom" {
		t.Errorf("%d checks, failure %q; want one check and the spec's own failure", n, msg)
	}
}

func TestEventuallyWithoutDescriptionGivesTheGist(t *testing.T) {
	msg := failureOf(t, func(b *base) {
		b.eventually("two", func(g gomega.Gomega) { g.Expect(1).To(gomega.Equal(2)) })
	})
	if want := "two: not reached within 80ms; last seen: Expected <int>: 1 to equal <int>: 2"; firstLine(msg) != want {
		t.Errorf("first line %q, want %q", firstLine(msg), want)
	}
}

func TestConsistentlySaysWhatBrokeAndWhen(t *testing.T) {
	n := 0
	msg := failureOf(t, func(b *base) {
		b.consistently("pod ns/p: no restart", func(g gomega.Gomega) {
			n++
			g.Expect(n).To(gomega.BeNumerically("<", 3), "container app restarted (check %d)", n)
		})
	})
	if n != 3 {
		t.Fatalf("consistently checked %d times, want it to stop at the third, failing, check", n)
	}
	first := firstLine(msg)
	if !strings.HasPrefix(first, "pod ns/p: no restart: did not hold for 60ms; after ") ||
		!strings.HasSuffix(first, " (check 3) saw: container app restarted (check 3)") {
		t.Errorf("first line %q, want what did not hold, when, and what was seen", first)
	}
	if !strings.Contains(msg, "poll_internal_test.go:") {
		t.Errorf("the message lacks the location of the failed assertion:\n%s", msg)
	}
}

func TestConsistentlyHolds(t *testing.T) {
	n := 0
	msg := failureOf(t, func(b *base) {
		b.consistently("holds", func(g gomega.Gomega) { n++ })
	})
	if msg != "" || n < 2 {
		t.Errorf("consistently of a condition that holds: %d checks, failure %q; want several checks and no failure", n, msg)
	}
}

// A check that calls gomega.StopTrying ends the wait at once, and the spec
// fails with the check's message.
func TestEventuallyStopTrying(t *testing.T) {
	n := 0
	msg := failureOf(t, func(b *base) {
		b.eventually("a node delivered to the second callback", func(g gomega.Gomega) {
			n++
			if n == 2 {
				gomega.StopTrying("the first callback received 1 node(s)").Now()
			}
			g.Expect(n).To(gomega.Equal(-1), "nothing delivered yet")
		})
	})
	if n != 2 {
		t.Errorf("eventually went on for %d checks after StopTrying at the second", n)
	}
	if want := "a node delivered to the second callback: gave up after 2 checks in "; !strings.HasPrefix(firstLine(msg), want) ||
		!strings.HasSuffix(firstLine(msg), ": the first callback received 1 node(s)") {
		t.Errorf("first line %q, want it to start with %q and end with StopTrying's message", firstLine(msg), want)
	}
}

// StopTrying(...).Successfully() ends a consistently early, as a success.
func TestConsistentlyStopTryingSuccessfully(t *testing.T) {
	n := 0
	msg := failureOf(t, func(b *base) {
		b.consistently("settled", func(g gomega.Gomega) {
			n++
			gomega.StopTrying("nothing more can change").Successfully().Now()
		})
	})
	if msg != "" || n != 1 {
		t.Errorf("%d checks, failure %q; want one check and no failure", n, msg)
	}
}

// TestLongWaitSaysWhatItWaitsFor: a wait on the real clock says, every
// progressEvery, what it waits for and what it last saw.
func TestLongWaitSaysWhatItWaitsFor(t *testing.T) {
	old := progressEvery
	progressEvery = 20 * time.Millisecond
	defer func() { progressEvery = old }()
	var said []string
	failureOf(t, func(b *base) {
		b.progress = func(text string) { said = append(said, text) }
		b.eventuallyFor(90*time.Millisecond, "pod ns/p: container app running", func(g gomega.Gomega) {
			g.Expect("Waiting").To(gomega.Equal("Running"), "app is not running")
		})
	})
	if len(said) < 2 {
		t.Fatalf("said %q while waiting 90ms, want a line every 20ms", said)
	}
	if want := "still waiting ("; !strings.HasPrefix(said[0], want) || !strings.Contains(said[0], "for pod ns/p: container app running; last seen: app is not running") {
		t.Errorf("said %q, want what the wait waits for and its last sight", said[0])
	}
}
