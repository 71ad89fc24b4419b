package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns3-copilot/gns3-copilot/internal/testkit/e2eenv"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/fakeopenai"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/procfs"
	"github.com/gns3-copilot/gns3-copilot/internal/testkit/ssetest"
	"github.com/gns3-copilot/gns3-copilot/workflows"
)

// BenchmarkConcurrentTurns is the load command: a class pressing Enter at the same moment. It
// builds the real binary and runs `serve` on its embedded defaults (SQLite, the SQLite event
// log, its own Temporal dev server) in a child process, against the fake GNS3 with 8 ms of
// latency per request and a model that streams at once; N students (LOAD_TURNS, default 100),
// each with their own GNS3 account and client, send a message at the same moment and read
// their stream to `done`. It prints time to first token and whole-turn latency (p50/p99), the
// throughput, and the CPU seconds of each process, read from /proc/<pid>/stat; a single
// turn's time to first token is measured before the burst. It also prints each process's
// resident memory idle, at its peak and after the burst, the longest silence within an open
// stream and how many were silent longer than the workflow task timeout, and how soon serve is
// back under 150 MB. Idle is measured LOAD_IDLE_AFTER (default 45s) after serve started, the
// resident set split into its anonymous part (heap, stacks) and its file-backed part (the
// binary's code and read-only data mapped from the page cache, which the kernel can drop).
//
//	make bench   (or: LOAD_TURNS=100 go test -run '^$' -bench ConcurrentTurns -benchtime 1x ./e2e)
//
// LOAD_BIN runs a binary built beforehand instead, so that two commits can be measured against
// each other by the same test within the same few minutes on a busy machine. LOAD_PPROF=file
// writes a CPU profile of `serve` during the burst's first LOAD_PPROF_SECONDS (default 5) to
// file (go tool pprof file), where its goroutines waited to file.block, and its heap right before
// and right after the burst to file.heap.before and file.heap. LOAD_SETTLE_AFTER=45s also
// prints each process's resident set that long after the burst ended. LOAD_CHUNK_DELAY=20ms
// makes the model send its words 20 ms apart instead of at once.
func BenchmarkConcurrentTurns(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("LOAD_TURNS")); err == nil && v > 0 {
		n = v
	}
	bin := os.Getenv("LOAD_BIN")
	if bin == "" {
		bin = buildBinary(b)
	}
	env, tokens := loadClass(b, n)
	project := env.ProjectID
	dataDir := b.TempDir()
	var extra []string
	pprofOut := os.Getenv("LOAD_PPROF")
	pprofAddr := ""
	if pprofOut != "" {
		pprofAddr = freeLoopbackAddr(b)
		extra = append(extra, "--pprof-listen", pprofAddr)
	}
	serveStarted := time.Now()
	proc := startServe(b, bin, dataDir, env, extra...)
	pids := map[string]int{"copilot (serve)": proc.cmd.Process.Pid}
	for _, c := range childPIDs(proc.cmd.Process.Pid) {
		pids["temporal dev server"] = c
	}
	pids["fakes + clients (this test)"] = os.Getpid()

	for b.Loop() {
		// One turn alone first: the burst must not be bought with a slower single turn.
		var single []time.Duration
		for range 5 {
			r := oneTurn(env, tokens[n], project)
			if r.err != nil {
				b.Fatalf("single turn: %v", r.err)
			}
			single = append(single, r.firstToken)
		}

		idleAfter := 45 * time.Second
		if d, err := time.ParseDuration(os.Getenv("LOAD_IDLE_AFTER")); err == nil {
			idleAfter = d
		}
		time.Sleep(time.Until(serveStarted.Add(idleAfter)))
		idle := memoryOf(pids)
		cpuBefore := cpuOf(pids)
		start := make(chan struct{})
		results := make([]turnResult, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				results[i] = oneTurn(env, tokens[i], project)
			})
		}
		if pprofOut != "" {
			// The heap before the burst, as the base of what the burst allocated
			// (go tool pprof -sample_index=alloc_space -base file.heap.before file.heap);
			// collected first, as a heap profile is as of the last collection.
			if err := fetchProfile("http://"+pprofAddr+"/debug/pprof/heap?gc=1", pprofOut+".heap.before"); err != nil {
				b.Errorf("heap profile of serve: %v", err)
			}
		}
		profiled := make(chan error, 1)
		if pprofOut != "" {
			secs := os.Getenv("LOAD_PPROF_SECONDS")
			if secs == "" {
				secs = "5"
			}
			go func() { profiled <- fetchProfile("http://"+pprofAddr+"/debug/pprof/profile?seconds="+secs, pprofOut) }()
		} else {
			profiled <- nil
		}
		t0 := time.Now()
		close(start)
		wg.Wait()
		wall := time.Since(t0)
		cpuAfter := cpuOf(pids)
		peak := memoryOf(pids)
		if err := <-profiled; err != nil {
			b.Errorf("CPU profile of serve: %v", err)
		}
		if pprofOut != "" {
			// Where serve's goroutines waited, since it started (the single turns are a few ms).
			if err := fetchProfile("http://"+pprofAddr+"/debug/pprof/block", pprofOut+".block"); err != nil {
				b.Errorf("block profile of serve: %v", err)
			}
			// What serve's heap holds right after the burst (collected first, as above), once
			// its memory has been read.
			if err := fetchProfile("http://"+pprofAddr+"/debug/pprof/heap?gc=1", pprofOut+".heap"); err != nil {
				b.Errorf("heap profile of serve: %v", err)
			}
		}

		opened, first, whole := burstTimes(b, results)
		rate := float64(n) / wall.Seconds()
		// A stall is a stream silent for longer than a lost workflow task costs (the workflow
		// task timeout) once it is open: more than that is something stuck, not a queue, which
		// shows in the time the stream takes to open.
		stalled := 0
		var silences []time.Duration
		var contentEvents []int
		for _, r := range results {
			silences = append(silences, r.silence)
			contentEvents = append(contentEvents, r.contentEvents)
			if r.silence > turnWorkflowTaskTimeout {
				stalled++
			}
		}
		b.ReportMetric(ms(percentile(single, 50)), "single-ttft-ms")
		b.ReportMetric(ms(percentile(first, 50)), "ttft-p50-ms")
		b.ReportMetric(ms(percentile(first, 99)), "ttft-p99-ms")
		b.ReportMetric(ms(percentile(whole, 50)), "turn-p50-ms")
		b.ReportMetric(ms(percentile(whole, 99)), "turn-p99-ms")
		b.ReportMetric(rate, "turns/s")
		var out strings.Builder
		fmt.Fprintf(&out, "\n%d concurrent turns, all finished in %.2f s (%.1f turns/s)\n", n, wall.Seconds(), rate)
		fmt.Fprintf(&out, "single turn, time to first token (median of 5): %.0f ms\n", ms(percentile(single, 50)))
		fmt.Fprintf(&out, "stream open (turn started) p50 %5.0f ms   p99 %7.0f ms\n", ms(percentile(opened, 50)), ms(percentile(opened, 99)))
		fmt.Fprintf(&out, "time to first token  p50 %7.0f ms   p99 %7.0f ms\n", ms(percentile(first, 50)), ms(percentile(first, 99)))
		fmt.Fprintf(&out, "whole turn           p50 %7.0f ms   p99 %7.0f ms\n", ms(percentile(whole, 50)), ms(percentile(whole, 99)))
		fmt.Fprintf(&out, "longest silence within an open stream %.0f ms; streams silent longer than the workflow task timeout (%s): %d\n",
			ms(slices.Max(silences)), turnWorkflowTaskTimeout, stalled)
		slices.Sort(contentEvents)
		fmt.Fprintf(&out, "content events a stream (the model sent the answer in %d chunks) p50 %d, fewest %d, most %d\n",
			len(fakeopenai.Words(loadAnswer)), contentEvents[len(contentEvents)/2], contentEvents[0], contentEvents[len(contentEvents)-1])
		names := make([]string, 0, len(pids))
		for name := range pids {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			cpu := cpuAfter[name] - cpuBefore[name]
			fmt.Fprintf(&out, "CPU during the burst  %-28s %6.2f s   %5.1f ms a turn\n", name, cpu, 1000*cpu/float64(n))
		}
		for _, name := range names {
			i, p := idle[name], peak[name]
			fmt.Fprintf(&out, "memory               %-28s idle %4.0f MB (anon %3.0f + file %3.0f)   peak %4.0f MB   after the burst %4.0f MB (anon %3.0f + file %3.0f)\n",
				name, mb(i.RSS), mb(i.Anon), mb(i.File), mb(p.Peak), mb(p.RSS), mb(p.Anon), mb(p.File))
		}
		sumIdle := mb(idle["copilot (serve)"].RSS + idle["temporal dev server"].RSS)
		sumAfter := mb(peak["copilot (serve)"].RSS + peak["temporal dev server"].RSS)
		fmt.Fprintf(&out, "serve + dev server    idle %4.0f MB   after the burst %4.0f MB\n", sumIdle, sumAfter)
		b.ReportMetric(1000*(cpuAfter["copilot (serve)"]-cpuBefore["copilot (serve)"])/float64(n), "serve-cpu-ms/turn")
		b.ReportMetric(1000*(cpuAfter["temporal dev server"]-cpuBefore["temporal dev server"])/float64(n), "devserver-cpu-ms/turn")
		b.ReportMetric(mb(idle["copilot (serve)"].RSS), "serve-idle-MB")
		b.ReportMetric(mb(idle["temporal dev server"].RSS), "devserver-idle-MB")
		// How soon serve gives back what the burst took (the runtime returns freed pages to
		// the system in the background); polled, as nothing announces it.
		serve := pids["copilot (serve)"]
		settled, after := settleRSS(serve, serveSettledRSS, time.Minute)
		fmt.Fprintf(&out, "copilot (serve) resident %.0f MB %s after the burst (goal: under %.0f MB within a minute)\n",
			mb(after), settled, mb(serveSettledRSS))
		if d, err := time.ParseDuration(os.Getenv("LOAD_SETTLE_AFTER")); err == nil && d > 0 {
			// What each process keeps once the burst is over: the trims run within two of their
			// 20 s intervals of the work stopping.
			time.Sleep(time.Until(t0.Add(wall + d)))
			settledMem := memoryOf(pids)
			for _, name := range names {
				m := settledMem[name]
				fmt.Fprintf(&out, "memory %s after the burst  %-28s %4.0f MB (anon %3.0f + file %3.0f)\n", d, name, mb(m.RSS), mb(m.Anon), mb(m.File))
			}
			fmt.Fprintf(&out, "serve + dev server    %s after the burst %4.0f MB\n", d,
				mb(settledMem["copilot (serve)"].RSS+settledMem["temporal dev server"].RSS))
		}
		b.ReportMetric(mb(peak["copilot (serve)"].Peak), "serve-peak-MB")
		b.ReportMetric(mb(peak["temporal dev server"].Peak), "devserver-peak-MB")
		b.ReportMetric(float64(stalled), "stalled-turns")
		fmt.Print(out.String())
		if os.Getenv("LOAD_SLOW_HISTORY") != "" {
			// The history of the slowest turn, when it took more than twice the median: where
			// its time went, event by event.
			slowest := slices.MaxFunc(results, func(a, b turnResult) int { return int(a.whole - b.whole) })
			if slowest.whole > 2*percentile(whole, 50) {
				printHistory(pids["temporal dev server"], slowest.workflowID, t0)
			}
		}
		// What went wrong on the way, if anything: the service's warnings and errors.
		if log, err := os.ReadFile(proc.log); err == nil && len(log) > 0 {
			lines := strings.Split(strings.TrimSpace(string(log)), "\n")
			fmt.Printf("serve logged %d warning/error lines; the last ones:\n", len(lines))
			for _, l := range lines[max(0, len(lines)-15):] {
				fmt.Println("  " + l)
			}
		}
	}
}

type turnResult struct {
	// opened is when the response headers arrived: the API has started the turn's workflow.
	opened, firstToken, whole time.Duration
	// silence is the longest time between two frames of the open stream.
	silence    time.Duration
	err        error
	workflowID string
	// contentEvents is how many content events carried the answer.
	contentEvents int
}

// oneTurn sends a message as the student with token and reads the stream to done.
func oneTurn(env *e2eenv.Env, token, project string) turnResult {
	body, _ := json.Marshal(map[string]any{"message": "What is in my lab?"})
	req, _ := http.NewRequest(http.MethodPost, env.URL+"/v3/projects/"+project+"/chat/stream", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return turnResult{err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return turnResult{err: fmt.Errorf("HTTP %d", resp.StatusCode)}
	}
	r := turnResult{opened: time.Since(t0)}
	var text strings.Builder
	frames := ssetest.NewReader(resp.Body)
	last := time.Now()
	for {
		f, err := frames.Next()
		if err != nil {
			return turnResult{err: fmt.Errorf("stream ended before done: %w", err)}
		}
		r.silence = max(r.silence, time.Since(last))
		last = time.Now()
		switch f.Event {
		case "content":
			if r.firstToken == 0 {
				r.firstToken = time.Since(t0)
			}
			r.contentEvents++
			var d struct{ Content string }
			if err := f.Decode(&d); err != nil {
				return turnResult{err: fmt.Errorf("content event %s: %w", f.Data, err)}
			}
			text.WriteString(d.Content)
		case "turn_started":
			var d struct {
				SessionID string `json:"session_id"`
				TurnID    string `json:"turn_id"`
			}
			if f.Decode(&d) == nil {
				r.workflowID = workflows.WorkflowID(d.SessionID, d.TurnID)
			}
		case "done":
			r.whole = time.Since(t0)
			var d struct{ Status string }
			if err := f.Decode(&d); err != nil || d.Status != "completed" {
				return turnResult{err: fmt.Errorf("turn ended %q: %s", d.Status, f.Data)}
			}
			if r.firstToken == 0 {
				return turnResult{err: fmt.Errorf("turn completed without any content")}
			}
			if text.String() != loadAnswer {
				return turnResult{err: fmt.Errorf("the answer arrived as %q, want %q", text.String(), loadAnswer)}
			}
			return r
		}
	}
}

// burstTimes are a burst's times per turn: the stream opened, the first token, the whole turn.
// Any turn that failed fails the benchmark.
func burstTimes(b *testing.B, results []turnResult) (opened, first, whole []time.Duration) {
	for i, r := range results {
		if r.err != nil {
			b.Fatalf("turn %d of %d: %v", i, len(results), r.err)
		}
		opened = append(opened, r.opened)
		first = append(first, r.firstToken)
		whole = append(whole, r.whole)
	}
	return opened, first, whole
}

// turnWorkflowTaskTimeout is the workflow task timeout the API starts turns with.
const turnWorkflowTaskTimeout = 5 * time.Second

// serveSettledRSS is what serve should be back under within a minute of a 300-turn burst
// (issue 25: idle 91 MB, 120 MB after a 100-turn burst).
const serveSettledRSS = 150 << 20

// memory is a process's resident set now (and its anonymous and file-backed parts) and its
// peak since it started, in bytes.
type memory = procfs.Memory

func memoryOf(pids map[string]int) map[string]memory {
	out := map[string]memory{}
	for name, pid := range pids {
		if m, ok := procfs.ReadMemory(pid); ok {
			out[name] = m
		}
	}
	return out
}

// settleRSS polls a process's resident set once a second until it is under goal or within
// has passed, and says which happened.
func settleRSS(pid int, goal int64, within time.Duration) (string, int64) {
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		m, ok := procfs.ReadMemory(pid)
		if !ok {
			return "(process gone)", 0
		}
		if m.RSS < goal {
			return fmt.Sprintf("%.0f s", time.Since(start).Seconds()), m.RSS
		}
		if time.Since(start) >= within {
			return fmt.Sprintf("still, %s", within), m.RSS
		}
		<-tick.C
	}
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }

func cpuOf(pids map[string]int) map[string]float64 {
	out := map[string]float64{}
	for name, pid := range pids {
		if st, ok := procfs.ReadStat(pid); ok {
			out[name] = st.CPUSeconds
		}
	}
	return out
}

func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func fetchProfile(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// printHistory prints a workflow's events with their times relative to t0, read with the
// Temporal CLI from the dev server whose process id is pid.
func printHistory(pid int, workflowID string, t0 time.Time) {
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	args := strings.Split(string(raw), "\x00")
	port := ""
	for i, a := range args {
		if a == "--port" && i+1 < len(args) {
			port = args[i+1]
		}
	}
	if len(args) == 0 || port == "" {
		fmt.Println("no dev server address for the history")
		return
	}
	out, err := exec.Command(args[0], "workflow", "show", "--address", "127.0.0.1:"+port, "-w", workflowID, "-o", "json").Output()
	if err != nil {
		fmt.Printf("history of %s: %v\n", workflowID, err)
		return
	}
	var h struct {
		Events []struct {
			EventID   string    `json:"eventId"`
			EventTime time.Time `json:"eventTime"`
			EventType string    `json:"eventType"`
			// Who took and who answered a workflow task, and how it timed out: what tells a
			// task lost on the way from one the worker held.
			Started   json.RawMessage `json:"workflowTaskStartedEventAttributes"`
			Completed json.RawMessage `json:"workflowTaskCompletedEventAttributes"`
			TimedOut  json.RawMessage `json:"workflowTaskTimedOutEventAttributes"`
			Failed    json.RawMessage `json:"workflowTaskFailedEventAttributes"`
		} `json:"events"`
	}
	if err := json.Unmarshal(out, &h); err != nil {
		fmt.Printf("history of %s: %v\n", workflowID, err)
		return
	}
	fmt.Printf("slowest turn %s:\n", workflowID)
	for _, e := range h.Events {
		detail := ""
		for _, a := range []json.RawMessage{e.Started, e.Completed, e.TimedOut, e.Failed} {
			if len(a) > 0 {
				detail += " " + string(a)
			}
		}
		fmt.Printf("  %+7.0f ms  %s%s\n", ms(e.EventTime.Sub(t0)), e.EventType, detail)
	}
}
