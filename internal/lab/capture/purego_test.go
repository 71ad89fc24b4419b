package capture

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The decoder must build where libpcap is absent: no gopacket/pcap (which links libpcap through
// cgo) and no cgo anywhere among its dependencies.
func TestBuildsWithoutLibpcapOrCgo(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}} {{len .CgoFiles}}", ".")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list with CGO_ENABLED=0: %v\n%s", err, out)
	}
	sawLayers := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, cgoFiles, _ := strings.Cut(line, " ")
		if strings.HasPrefix(pkg, "github.com/google/gopacket/pcap") && pkg != "github.com/google/gopacket/pcapgo" {
			t.Errorf("%s links libpcap", pkg)
		}
		if cgoFiles != "0" {
			t.Errorf("%s needs cgo", pkg)
		}
		sawLayers = sawLayers || pkg == "github.com/google/gopacket/layers"
	}
	if !sawLayers {
		t.Errorf("gopacket/layers is not among the dependencies:\n%s", out)
	}
}
