package vk

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// TestTimeoutScaleStretchesWaits checks that Config.TimeoutScale stretches
// the bound of a wait (env.await): what happens after 45s is awaited in
// time under a bound of 30s only with a scale of 2.
func TestTimeoutScaleStretchesWaits(t *testing.T) {
	for _, tc := range []struct {
		scale float64
		want  bool
	}{{0, false}, {1, false}, {2, true}} {
		synctest.Test(t, func(t *testing.T) {
			e := &env{ctx: t.Context(), cfg: Config{TimeoutScale: tc.scale}}
			start := time.Now()
			if got := e.await(30*time.Second, func() bool { return time.Since(start) >= 45*time.Second }); got != tc.want {
				t.Errorf("scale %g: a condition met after 45s awaited with a bound of 30s: %v, want %v", tc.scale, got, tc.want)
			}
		})
	}
}

// TestTimeoutScaleFlag checks that -vk.timeout-scale multiplies
// Config.TimeoutScale and that a flag that is not a positive number is an
// error naming it.
func TestTimeoutScaleFlag(t *testing.T) {
	defer func(s float64) { flags.TimeoutScale = s }(flags.TimeoutScale)
	flags.TimeoutScale = 3
	cfg := references[0].config()
	cfg.TimeoutScale = 2
	st, err := resolve(cfg)
	if err != nil || st.cfg.TimeoutScale != 6 || st.scale != 6 {
		t.Fatalf("Config.TimeoutScale 2 under -vk.timeout-scale=3: %v, %+v; want a scale of 6", err, st)
	}
	if text := renderSummary(nil, st, vkSuite.Judge(nil, types.Report{}), ""); !strings.Contains(text, "timeout scale 6\n") {
		t.Errorf("the summary does not show the scale:\n%s", text)
	}
	flags.TimeoutScale = 0
	if _, err := resolve(cfg); err == nil || !strings.Contains(err.Error(), "-vk.timeout-scale=0 is not a positive number") {
		t.Errorf("-vk.timeout-scale=0: %v, want an error naming the flag", err)
	}
}
