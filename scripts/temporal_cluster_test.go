package scripts_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gns3-copilot/gns3-copilot/internal/temporaldev"
)

// The cluster's setup registers every search attribute turns and jobs set; a missing one would
// make every turn's start fail once and run again unsearchable.
func TestClusterSetupRegistersTheSearchAttributes(t *testing.T) {
	raw, err := os.ReadFile("temporal-cluster/setup.sh")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(raw), "\nSEARCH_ATTRIBUTES=\"")
	require.True(t, ok, `setup.sh has no SEARCH_ATTRIBUTES="…" line`)
	list, _, _ := strings.Cut(rest, "\"")
	assert.Equal(t, temporaldev.SearchAttributes, strings.Fields(list))
}

// docker-compose.yml runs the server make cluster-load measures: the image built from
// scripts/temporal-cluster is tagged with the server version its go.mod pins, and no copilot
// process starts before the namespace step (which registers the search attributes) succeeded.
func TestComposeRunsTheMeasuredServer(t *testing.T) {
	mod, err := os.ReadFile("temporal-cluster/go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*go\.temporal\.io/server v(\S+)`).FindSubmatch(mod)
	require.NotNil(t, m, "scripts/temporal-cluster/go.mod requires no go.temporal.io/server")
	version := string(m[1])

	raw, err := os.ReadFile("../docker-compose.yml")
	require.NoError(t, err)
	compose := string(raw)
	assert.Contains(t, compose, "build: scripts/temporal-cluster\n")
	images := regexp.MustCompile(`(?m)^\s*image: (\S*temporal\S*)$`).FindAllStringSubmatch(compose, -1)
	for _, img := range images {
		if strings.HasPrefix(img[1], "temporalio/ui:") {
			continue
		}
		assert.Equal(t, "gns3-copilot-temporal:"+version, img[1], "a Temporal image other than the measured server")
	}
	assert.Contains(t, compose, `entrypoint: ["temporal-setup", "namespace"]`)
	_, api, ok := strings.Cut(compose, "\n  api-1:\n")
	require.True(t, ok, "docker-compose.yml has no api-1")
	api, _, _ = strings.Cut(api, "\n  api-2:\n")
	assert.Regexp(t, `temporal-namespace:\s+condition: service_completed_successfully`, api)
}
