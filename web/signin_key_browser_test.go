package web_test

import (
	"testing"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
)

// TestSignInWithAPIKeyInBrowser runs web/e2e/signin_key.e2e.test.mjs: the page's sign-in takes
// a GNS3 API key, which GNS3 (the fake, taught 3.1's keys) checks; a revoked one is refused.
func TestSignInWithAPIKeyInBrowser(t *testing.T) {
	node := requireBrowserTools(t)
	env := e2eenv.Start(t, e2eenv.Options{})
	key := env.GNS3.IssueAPIKey(e2eenv.Username)
	revoked := env.GNS3.IssueAPIKey(e2eenv.Username)
	env.GNS3.RevokeAPIKey(revoked)
	runNodeTests(t, node, "signin_key.e2e.test.mjs", sameOrigin(t, env.URL), "COPILOT_API_KEY="+key, "COPILOT_REVOKED_API_KEY="+revoked)
}
