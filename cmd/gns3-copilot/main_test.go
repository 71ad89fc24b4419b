package main

import (
	"os"
	"strings"
	"testing"
)

func TestSecurityFlags(t *testing.T) {
	c, err := parseConfig("serve", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxTurnsPerUser != 4 || c.TurnsPerMinute != 10 || c.DailyTokenBudget != 0 || c.LimitSuperadmins ||
		len(c.LLMAllowHosts) != 0 || c.LLMAllowlistOnly {
		t.Fatalf("defaults: %+v", c)
	}

	t.Setenv("GNS3_COPILOT_LLM_ALLOW_HOSTS", "ollama.lan, 10.0.0.0/8")
	t.Setenv("GNS3_COPILOT_DAILY_TOKEN_BUDGET", "50000")
	t.Setenv("GNS3_COPILOT_LIMIT_SUPERADMINS", "true")
	c, err = parseConfig("serve", []string{"--max-turns-per-user", "2", "--llm-allowlist-only"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.LLMAllowHosts, "|") != "ollama.lan|10.0.0.0/8" || !c.LLMAllowlistOnly || c.MaxTurnsPerUser != 2 ||
		c.DailyTokenBudget != 50000 || !c.LimitSuperadmins {
		t.Fatalf("from flags and environment: %+v", c)
	}

	if _, err := parseConfig("serve", []string{"--turns-per-minute", "-1"}); err == nil || !strings.Contains(err.Error(), "--turns-per-minute") {
		t.Fatalf("a negative limit: %v", err)
	}
}

func TestVersionSaysWhatWasBuilt(t *testing.T) {
	buildTime, buildVersion = "2026-12-01T14:00:00Z", "v1.2.3"
	defer func() { buildTime, buildVersion = "", "" }()
	got := readVersion().String()
	for _, want := range []string{
		"gns3-copilot v1.2.3\n",
		"  built:        2026-12-01T14:00:00Z\n",
		"  go:           go1.",
		"  temporal CLI: 1.5.1 (the pinned release; install it with `go install github.com/temporalio/cli/cmd/temporal@v1.5.1`)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("version output lacks %q:\n%s", want, got)
		}
	}
}

func TestDoctorTakesServesFlagsAndALogin(t *testing.T) {
	clearEnv(t)
	t.Setenv("GNS3_COPILOT_GNS3_PASSWORD", "pw")
	t.Setenv("GNS3_COPILOT_GNS3_TOKEN", "tok")
	c, login, err := parseCommand("doctor", []string{"--gns3-url", "http://gns3:3080", "--gns3-user", "admin"})
	if err != nil {
		t.Fatal(err)
	}
	if c.GNS3URL != "http://gns3:3080" || login.User != "admin" || login.Password != "pw" || login.Token != "tok" {
		t.Fatalf("doctor's flags: %+v %+v", c, login)
	}
	// serve has no login flag: it logs nobody in.
	if _, err := parseConfig("serve", []string{"--gns3-user", "admin"}); err == nil {
		t.Fatal("serve accepted --gns3-user")
	}
}

func TestMemoryLimitFlag(t *testing.T) {
	clearEnv(t)
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	for in, want := range map[string]int64{"": 256 << 20, "off": 0, "0": 0, "256MiB": 256 << 20, "1GiB": 1 << 30, "200MB": 200e6, "67108864": 64 << 20} {
		args := []string{}
		if in != "" {
			args = []string{"--memory-limit", in}
		}
		c, err := parseConfig("serve", args)
		if err != nil || c.MemoryLimit != want {
			t.Errorf("--memory-limit %q: %d, %v; want %d", in, c.MemoryLimit, err, want)
		}
	}
	for _, bad := range []string{"lots", "-5MiB", "1MiB", "12XB"} {
		if _, err := parseConfig("serve", []string{"--memory-limit", bad}); err == nil || !strings.Contains(err.Error(), "--memory-limit") {
			t.Errorf("--memory-limit %q: %v; want an error naming the flag", bad, err)
		}
	}
	t.Setenv("GOMEMLIMIT", "300MiB")
	if c, err := parseConfig("serve", nil); err != nil || c.MemoryLimit != 300<<20 {
		t.Errorf("GOMEMLIMIT=300MiB: %d, %v; want it as the default", c.MemoryLimit, err)
	}
}

// The dev server's limit is off unless asked for, and checked like serve's own.
func TestTemporalMemoryLimitFlag(t *testing.T) {
	clearEnv(t)
	if c, err := parseConfig("serve", nil); err != nil || c.TemporalMemoryLimit != 0 {
		t.Errorf("default: %d, %v; want 0 (off)", c.TemporalMemoryLimit, err)
	}
	if c, err := parseConfig("serve", []string{"--temporal-memory-limit", "64MiB"}); err != nil || c.TemporalMemoryLimit != 64<<20 {
		t.Errorf("64MiB: %d, %v", c.TemporalMemoryLimit, err)
	}
	t.Setenv("GNS3_COPILOT_TEMPORAL_MEMORY_LIMIT", "96MiB")
	if c, err := parseConfig("serve", nil); err != nil || c.TemporalMemoryLimit != 96<<20 {
		t.Errorf("GNS3_COPILOT_TEMPORAL_MEMORY_LIMIT=96MiB: %d, %v", c.TemporalMemoryLimit, err)
	}
	for _, bad := range []string{"lots", "1MiB"} {
		if _, err := parseConfig("serve", []string{"--temporal-memory-limit", bad}); err == nil || !strings.Contains(err.Error(), "--temporal-memory-limit") {
			t.Errorf("--temporal-memory-limit %q: %v; want an error naming the flag", bad, err)
		}
	}
}
