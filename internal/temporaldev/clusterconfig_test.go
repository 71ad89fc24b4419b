package temporaldev

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The Temporal server of the scaled-out layout (scripts/temporal-cluster, docker-compose.yml)
// runs with the dynamic configuration the dev server gets, so the two layouts compare on the
// server alone and a setting that helps one is not forgotten in the other.
func TestClusterDynamicConfigIsTheDevServers(t *testing.T) {
	raw, err := os.ReadFile("../../scripts/temporal-cluster/config/dynamicconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The file is a list of "key:" lines, each followed by one "  - value: v" line.
	var got []string
	key := ""
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":"):
			key = strings.TrimSuffix(line, ":")
		case strings.HasPrefix(strings.TrimSpace(line), "- value:"):
			if key == "" {
				t.Fatalf("a value without a key: %q", line)
			}
			got = append(got, key+"="+strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- value:")))
			key = ""
		default:
			t.Fatalf("a line this test does not understand (constraints are not expected): %q", line)
		}
	}
	want := slices.Clone(pollRPSSettings)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("cluster dynamic config\n got  %v\n want %v (pollRPSSettings)", got, want)
	}
}
