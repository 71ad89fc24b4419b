package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakegns3"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
)

// BenchmarkScaledOutTurns is the load command's burst against both layouts within the same
// minutes: "serve" on its embedded defaults (SQLite, its own Temporal dev server), then
// "cluster": two `api` and two `worker` processes sharing a real Temporal server (PostgreSQL
// persistence, several history shards), Redis and PostgreSQL. The same class (LOAD_TURNS
// students, default 100, each with their own account, sending one message at the same moment;
// the fake GNS3 answers in 8 ms, the model streams at once) runs against each; in the cluster
// the students are spread over the two APIs as a load balancer would. It prints throughput,
// time to first token and whole-turn p50/p99, and the CPU seconds and peak RSS of every
// process during the burst.
//
// scripts/temporal-cluster/run.sh (make cluster-load) builds and starts the Temporal server
// and runs it with LOAD_TEMPORAL (the server's host:port), LOAD_TEMPORAL_PID (its process, for
// CPU and memory), LOAD_REDIS_URL and LOAD_DATABASE_URL. LOAD_BIN runs a binary built
// beforehand, as in BenchmarkConcurrentTurns. With -count N the layouts alternate.
func BenchmarkScaledOutTurns(b *testing.B) {
	temporalAddr := os.Getenv("LOAD_TEMPORAL")
	redisURL := os.Getenv("LOAD_REDIS_URL")
	databaseURL := os.Getenv("LOAD_DATABASE_URL")
	if temporalAddr == "" || redisURL == "" || databaseURL == "" {
		b.Skip("skipping: the scaled-out layout needs LOAD_TEMPORAL, LOAD_REDIS_URL and LOAD_DATABASE_URL; " +
			"scripts/temporal-cluster/run.sh (make cluster-load) sets them up")
	}
	n := 100
	if v, err := strconv.Atoi(os.Getenv("LOAD_TURNS")); err == nil && v > 0 {
		n = v
	}
	bin := os.Getenv("LOAD_BIN")
	if bin == "" {
		bin = buildBinary(b)
	}
	temporalPID, _ := strconv.Atoi(os.Getenv("LOAD_TEMPORAL_PID"))

	b.Run("serve", func(b *testing.B) {
		env, tokens := loadClass(b, n)
		proc := startServe(b, bin, b.TempDir(), env)
		pids := map[string]int{"serve": proc.cmd.Process.Pid}
		for _, c := range childPIDs(proc.cmd.Process.Pid) {
			pids["temporal dev server (child of serve)"] = c
		}
		for b.Loop() {
			runBurst(b, []string{env.URL}, env, tokens, pids, []string{proc.log})
		}
	})

	b.Run("cluster", func(b *testing.B) {
		env, tokens := loadClass(b, n)
		// Every process of one deployment shares the key that seals credentials and API keys.
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		shared := []string{"--temporal-address", temporalAddr, "--redis-url", redisURL,
			"--database-url", databaseURL, "--secret-key", base64.StdEncoding.EncodeToString(key)}
		pids := map[string]int{}
		if temporalPID > 0 {
			pids["temporal server (PostgreSQL)"] = temporalPID
		}
		var urls, logs []string
		start := func(role string, i int) {
			p := startRole(b, bin, role, b.TempDir(), env, shared...)
			pids[fmt.Sprintf("%s-%d", role, i)] = p.cmd.Process.Pid
			logs = append(logs, p.log)
			if p.url != "" {
				urls = append(urls, p.url)
			}
		}
		// The first API migrates the copilot's tables alone, as docker-compose.yml orders it.
		start("api", 1)
		start("api", 2)
		start("worker", 1)
		start("worker", 2)
		for b.Loop() {
			runBurst(b, urls, env, tokens, pids, logs)
		}
	})
}

// loadClass starts the fakes for a class of n students in one project: the fake GNS3 with
// 8 ms per request and a model that answers at once. The returned tokens are the students',
// plus one more account for the single turns measured before a burst, so that the per-user
// limits never see a student send more than one message.
func loadClass(b *testing.B, n int) (*e2eenv.Env, []string) {
	env := fakesEnv(b, fakegns3.WithLatency(8*time.Millisecond))
	tokens := make([]string, n+1)
	members := make([]string, n+1)
	for i := range n + 1 {
		members[i] = fmt.Sprintf("student%03d", i)
		tokens[i] = fmt.Sprintf("token-of-student%03d", i)
		env.GNS3.AddUser(members[i], tokens[i], false)
	}
	env.ProjectID = env.GNS3.AddProject("class-lab", fakegns3.Members(members...))
	// LOAD_CHUNK_DELAY spaces the answer's words as a hosted model does (say 20ms), where each
	// word arrives after the last one's event was written and none can be merged.
	gap, _ := time.ParseDuration(os.Getenv("LOAD_CHUNK_DELAY"))
	env.LLM.SetHandler(func(req fakeopenai.Request) (fakeopenai.Reply, bool) {
		if !req.Stream {
			return fakeopenai.Text("Lab question"), true
		}
		r := fakeopenai.Text(loadAnswer)
		r.ChunkDelay = gap
		return r, true
	})
	return env, tokens
}

// loadAnswer is what the load's model answers every student, in one chunk a word.
const loadAnswer = "Your lab has no nodes yet; add two VPCS and link them to start."

// runBurst measures five single turns, then sends one message per student at the same moment,
// student i through urls[i % len(urls)], reads every stream to done, and prints and reports
// what it measured; pids are the processes whose CPU and memory count, logs their logs.
func runBurst(b *testing.B, urls []string, env *e2eenv.Env, tokens []string, pids map[string]int, logs []string) {
	n := len(tokens) - 1
	through := make([]*e2eenv.Env, len(urls))
	for i, u := range urls {
		e := *env
		e.URL = u
		through[i] = &e
	}
	var single, singleOpened []time.Duration
	for range 5 {
		r := oneTurn(through[0], tokens[n], env.ProjectID)
		if r.err != nil {
			b.Fatalf("single turn: %v", r.err)
		}
		single = append(single, r.firstToken)
		singleOpened = append(singleOpened, r.opened)
	}

	idle := memoryOf(pids)
	resetPeakRSS(b, pids)
	cpuBefore := cpuOf(pids)
	start := make(chan struct{})
	results := make([]turnResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = oneTurn(through[i%len(through)], tokens[i], env.ProjectID)
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(t0)
	cpuAfter := cpuOf(pids)
	peak := memoryOf(pids)

	opened, first, whole := burstTimes(b, results)
	rate := float64(n) / wall.Seconds()
	var peakTotal float64
	for _, m := range peak {
		peakTotal += mb(m.Peak)
	}
	b.ReportMetric(ms(percentile(single, 50)), "single-ttft-ms")
	b.ReportMetric(ms(percentile(first, 50)), "ttft-p50-ms")
	b.ReportMetric(ms(percentile(first, 99)), "ttft-p99-ms")
	b.ReportMetric(ms(percentile(whole, 99)), "turn-p99-ms")
	b.ReportMetric(rate, "turns/s")
	b.ReportMetric(peakTotal, "peak-rss-MB")

	var out strings.Builder
	fmt.Fprintf(&out, "\n%s: %d concurrent turns through %d API(s), all finished in %.2f s (%.1f turns/s)\n", b.Name(), n, len(urls), wall.Seconds(), rate)
	fmt.Fprintf(&out, "single turn (median of 5): stream open %.0f ms, first token %.0f ms\n", ms(percentile(singleOpened, 50)), ms(percentile(single, 50)))
	fmt.Fprintf(&out, "stream open (turn started) p50 %5.0f ms   p99 %7.0f ms\n", ms(percentile(opened, 50)), ms(percentile(opened, 99)))
	fmt.Fprintf(&out, "time to first token  p50 %7.0f ms   p99 %7.0f ms\n", ms(percentile(first, 50)), ms(percentile(first, 99)))
	fmt.Fprintf(&out, "whole turn           p50 %7.0f ms   p99 %7.0f ms\n", ms(percentile(whole, 50)), ms(percentile(whole, 99)))
	names := make([]string, 0, len(pids))
	for name := range pids {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(&out, "%-38s CPU %6.2f s   RSS idle %5.0f MB, peak %5.0f MB\n", name,
			cpuAfter[name]-cpuBefore[name], mb(idle[name].RSS), mb(peak[name].Peak))
	}
	fmt.Fprintf(&out, "%-38s peak RSS %5.0f MB in all\n", "", peakTotal)
	fmt.Print(out.String())
	// What went wrong on the way, if anything: the processes' warnings and errors.
	for _, path := range logs {
		if log, err := os.ReadFile(path); err == nil && len(log) > 0 {
			lines := strings.Split(strings.TrimSpace(string(log)), "\n")
			fmt.Printf("%s: %d warning/error lines; the last ones:\n", path, len(lines))
			for _, l := range lines[max(0, len(lines)-5):] {
				fmt.Println("  " + l)
			}
		}
	}
}

// resetPeakRSS starts each process's VmHWM afresh ("5" to clear_refs), so the peak read after a
// burst is the burst's and not that of an earlier one on the same long-lived server.
func resetPeakRSS(b *testing.B, pids map[string]int) {
	for name, pid := range pids {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			b.Fatalf("resetting the peak RSS of %s (pid %d): %v", name, pid, err)
		}
	}
}
