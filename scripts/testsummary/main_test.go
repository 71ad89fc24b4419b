package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A `go test -json` stream as go 1.26 writes it: two tests skipped for a missing PostgreSQL,
// one for a missing CLI, one passing, one failing.
const stream = `{"Action":"start","Package":"example/models"}
{"Action":"run","Package":"example/models","Test":"TestA"}
{"Action":"output","Package":"example/models","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"example/models","Test":"TestA","Output":"    testdb.go:160: skipping: PostgreSQL (host=127.0.0.1 user=postgres dbname=test) is not available\n"}
{"Action":"output","Package":"example/models","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"example/models","Test":"TestA"}
{"Action":"run","Package":"example/models","Test":"TestB"}
{"Action":"output","Package":"example/models","Test":"TestB","Output":"    testdb.go:160: skipping: PostgreSQL (host=127.0.0.1 user=postgres dbname=test) is not available\n"}
{"Action":"skip","Package":"example/models","Test":"TestB"}
{"Action":"run","Package":"example/models","Test":"TestC"}
{"Action":"output","Package":"example/models","Test":"TestC","Output":"--- PASS: TestC (0.00s)\n"}
{"Action":"pass","Package":"example/models","Test":"TestC"}
{"Action":"output","Package":"example/models","Output":"ok  \texample/models\t0.1s\n"}
{"Action":"pass","Package":"example/models"}
{"Action":"run","Package":"example/e2e","Test":"TestD"}
{"Action":"output","Package":"example/e2e","Test":"TestD","Output":"    e2eenv.go:74: skipping: temporal CLI not found\n"}
{"Action":"skip","Package":"example/e2e","Test":"TestD"}
{"Action":"run","Package":"example/e2e","Test":"TestE"}
{"Action":"output","Package":"example/e2e","Test":"TestE","Output":"    chat_test.go:12: expected done\n"}
{"Action":"output","Package":"example/e2e","Test":"TestE","Output":"--- FAIL: TestE (0.20s)\n"}
{"Action":"fail","Package":"example/e2e","Test":"TestE"}
{"Action":"output","Package":"example/e2e","Output":"FAIL\texample/e2e\t0.3s\n"}
{"Action":"fail","Package":"example/e2e"}
`

func TestSummary(t *testing.T) {
	var out strings.Builder
	s, err := summarize(strings.NewReader(stream), &out)
	require.NoError(t, err)
	assert.Equal(t, 1, s.failed)
	assert.Equal(t, "ok  \texample/models\t0.1s\n"+
		"    chat_test.go:12: expected done\n--- FAIL: TestE (0.20s)\n"+
		"FAIL\texample/e2e\t0.3s\n"+
		"testsummary: 3 tests skipped (CI=true would fail them instead): 2 × PostgreSQL (host=127.0.0.1 user=postgres dbname=test) is not available; 1 × temporal CLI not found\n",
		out.String())
}

func TestNothingSkipped(t *testing.T) {
	var out strings.Builder
	s, err := summarize(strings.NewReader(`{"Action":"pass","Package":"p","Test":"T"}`+"\nbuild output that is not JSON\n"), &out)
	require.NoError(t, err)
	assert.Zero(t, s.failed)
	assert.Equal(t, "build output that is not JSON\ntestsummary: no test was skipped\n", out.String())
}
