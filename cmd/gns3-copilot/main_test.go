package main

import (
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
