package main

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"

	"go.temporal.io/api/enums/v1"
)

// The command line gns3-copilot's temporaldev gives the CLI (settings.go, startArgs) means here
// what it means to `temporal server start-dev`. Starting the server with it is tested from the
// main module (internal/temporaldev, TestEitherBinaryRunsTheDevServer).
func TestTheCopilotsCommandLine(t *testing.T) {
	opts, err := parseStartDev([]string{
		"--ip", "127.0.0.1", "--port", "41000", "--db-filename", "/data/temporal.db", "--log-level", "warn",
		"--headless", "--namespace", "gns3",
		"--search-attribute", "ProjectId=Keyword", "--search-attribute", "Score=int",
		"--dynamic-config-value", "history.hostLevelCacheMaxSize=512",
		"--dynamic-config-value", "system.enableNexus=false",
		"--dynamic-config-value", `frontend.namespace="x"`,
		"--dynamic-config-value", "limits.ratio=0.5",
		"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.FrontendIP != "127.0.0.1" || opts.FrontendPort != 41000 || opts.DatabaseFile != "/data/temporal.db" {
		t.Errorf("frontend %s:%d, database %q", opts.FrontendIP, opts.FrontendPort, opts.DatabaseFile)
	}
	if opts.LogLevel != slog.LevelWarn || opts.UIIP != "" || opts.UIPort != 0 {
		t.Errorf("log level %v, UI %q:%d (headless)", opts.LogLevel, opts.UIIP, opts.UIPort)
	}
	if strings.Join(opts.Namespaces, ",") != "default,gns3" {
		t.Errorf("namespaces %v", opts.Namespaces)
	}
	if opts.SearchAttributes["ProjectId"] != enums.INDEXED_VALUE_TYPE_KEYWORD || opts.SearchAttributes["Score"] != enums.INDEXED_VALUE_TYPE_INT {
		t.Errorf("search attributes %v", opts.SearchAttributes)
	}
	want := map[string]any{
		"history.hostLevelCacheMaxSize": 512, "system.enableNexus": false, "frontend.namespace": "x", "limits.ratio": 0.5,
		// the CLI's own defaults, kept
		"system.forceSearchAttributesCacheRefreshOnRead": true, "frontend.persistenceMaxQPS": 10000,
	}
	for k, v := range want {
		if got := opts.DynamicConfigValues[k]; got != v {
			t.Errorf("dynamic config %s = %#v, want %#v", k, got, v)
		}
	}
	if opts.SqlitePragmas["journal_mode"] != "wal" || opts.SqlitePragmas["synchronous"] != "normal" {
		t.Errorf("pragmas %v", opts.SqlitePragmas)
	}
	if opts.ClusterID == "" || opts.CurrentClusterName == "" || opts.InitialFailoverVersion != 1 {
		t.Errorf("cluster %q %q %d", opts.ClusterID, opts.CurrentClusterName, opts.InitialFailoverVersion)
	}
}

// Without --headless the UI binds to --ip on --port + 1000 unless told otherwise, as the CLI's.
func TestTheUIDefaultsAsTheCLIs(t *testing.T) {
	opts, err := parseStartDev([]string{"--ip", "localhost", "--port", "41000"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.FrontendIP != "127.0.0.1" || opts.UIIP != "127.0.0.1" || opts.UIPort != 42000 {
		t.Errorf("frontend %s, UI %s:%d", opts.FrontendIP, opts.UIIP, opts.UIPort)
	}
	opts, err = parseStartDev([]string{"--ui-ip", "0.0.0.0", "--ui-port", "8233", "--pprof-port", "6060"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if opts.UIIP != "0.0.0.0" || opts.UIPort != 8233 || opts.PProfPort != 6060 {
		t.Errorf("UI %s:%d, pprof %d", opts.UIIP, opts.UIPort, opts.PProfPort)
	}
}

func TestBadCommandLinesSayWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dynamic-config-value", "history.x=[1,"}, "history.x"},
		{[]string{"--dynamic-config-value", "history.x=1 2"}, "not one JSON value"},
		{[]string{"--dynamic-config-value", "novalue"}, "KEY=JSON"},
		{[]string{"--search-attribute", "A=Colour"}, "unknown type"},
		{[]string{"--sqlite-pragma", "=wal"}, "NAME=VALUE"},
		{[]string{"--log-level", "loud"}, "never"},
		{[]string{"--port", "x"}, "invalid value"},
		{[]string{"--no-such-flag"}, "not defined"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		var stderr bytes.Buffer
		_, err := parseStartDev(c.args, &stderr)
		if err == nil || !strings.Contains(err.Error()+stderr.String(), c.want) {
			t.Errorf("%q: err %v, stderr %q; want %q", c.args, err, stderr.String(), c.want)
		}
	}
}

func TestRunTakesOnlyStartDev(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"workflow", "list"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "server start-dev") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"server", "start-dev", "--log-level", "loud"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--log-level") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"--version"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Temporal CLI v1.5.1") {
		t.Errorf("exit %d, stdout %q", code, stdout.String())
	}
}
