// Command suitetime prints the wall time of a conformance run per spec group
// from Ginkgo JSON reports (-ginkgo.json-report): for each report, the total
// and, per group label of the catalogue (sync, status, kill, ...), the number
// of specs run and the time they took, slowest first, with the slowest spec
// of the group.
//
//	go run ./hack/suitetime _output/fake.json _output/hostprocess.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// notGroups are the labels that are not feature groups.
var notGroups = map[string]bool{"pod": true, "node": true, "must": true, "should": true, "benchmark": true, "Serial": true}

type group struct {
	name    string
	specs   int
	total   time.Duration
	slowest string
	slow    time.Duration
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: suitetime REPORT.json...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		if err := summarise(path); err != nil {
			fmt.Fprintf(os.Stderr, "suitetime: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func summarise(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		return fmt.Errorf("not a Ginkgo JSON report: %w", err)
	}
	for _, r := range reports {
		groups := map[string]*group{}
		var run int
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType != types.NodeTypeIt || sr.State == types.SpecStateSkipped || sr.State == types.SpecStatePending {
				continue
			}
			run++
			id := strings.SplitN(sr.LeafNodeText, "]", 2)[0] + "]"
			for _, l := range sr.Labels() {
				if notGroups[l] || strings.HasPrefix(l, "capability:") {
					continue
				}
				g := groups[l]
				if g == nil {
					g = &group{name: l}
					groups[l] = g
				}
				g.specs++
				g.total += sr.RunTime
				if sr.RunTime > g.slow {
					g.slow, g.slowest = sr.RunTime, id
				}
			}
		}
		list := make([]*group, 0, len(groups))
		for _, g := range groups {
			list = append(list, g)
		}
		slices.SortFunc(list, func(a, b *group) int { return int(b.total - a.total) })
		fmt.Printf("%s: %s, %d specs run in %s (a spec counts in each of its groups)\n",
			filepath.Base(path), r.SuiteDescription, run, r.RunTime.Round(10*time.Millisecond))
		tw := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  group\tspecs\ttime\tslowest")
		for _, g := range list {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s %s\n", g.name, g.specs, g.total.Round(10*time.Millisecond), g.slowest, g.slow.Round(10*time.Millisecond))
		}
		tw.Flush()
	}
	return nil
}
