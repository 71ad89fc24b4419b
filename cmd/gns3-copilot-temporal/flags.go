package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/google/uuid"
	"github.com/temporalio/cli/temporalcli/devserver"
	"go.temporal.io/api/enums/v1"
)

// cliDefaults are the dynamic config values `temporal server start-dev` adds unless told
// otherwise, so that this server behaves as the CLI's: search attributes visible as soon as
// they are created, and persistence rate limits raised for the refresh that costs.
var cliDefaults = map[string]any{
	"system.forceSearchAttributesCacheRefreshOnRead": true,
	"frontend.persistenceMaxQPS":                     10000,
	"history.persistenceMaxQPS":                      45000,
}

// repeated is a flag given any number of times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(s string) error { *r = append(*r, s); return nil }

// parseStartDev reads the flags of `temporal server start-dev` that gns3-copilot passes, with
// the CLI's meaning and defaults, into the dev server's options.
func parseStartDev(args []string, stderr io.Writer) (devserver.StartOptions, error) {
	fs := flag.NewFlagSet("gns3-copilot-temporal server start-dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		ip       = fs.String("ip", "127.0.0.1", "IP address the frontend (and by default the UI) binds to")
		port     = fs.Int("port", 7233, "the frontend's gRPC port")
		httpPort = fs.Int("http-port", 0, "the frontend's HTTP port (0: a free one)")
		dbFile   = fs.String("db-filename", "", "the SQLite database file, created with its schema when missing (empty: in memory)")
		level    = fs.String("log-level", "warn", "debug, info, warn, error or never")
		headless = fs.Bool("headless", false, "no Web UI")
		uiIP     = fs.String("ui-ip", "", "IP address the Web UI binds to (default: --ip)")
		uiPort   = fs.Int("ui-port", 0, "the Web UI's port (default: --port + 1000)")
		metrics  = fs.Int("metrics-port", 0, "port of a Prometheus endpoint (0: none)")
		pprof    = fs.Int("pprof-port", 0, "port of Go's /debug/pprof/ profiles, on localhost (0: none; not a flag of the CLI)")
		nss, sas repeated
		dyn, prg repeated
	)
	fs.Var(&nss, "namespace", "a namespace to create besides default (repeatable)")
	fs.Var(&sas, "search-attribute", "NAME=TYPE, a search attribute to register (repeatable)")
	fs.Var(&dyn, "dynamic-config-value", "KEY=JSON, a dynamic config value (repeatable)")
	fs.Var(&prg, "sqlite-pragma", "NAME=VALUE, a SQLite pragma (repeatable)")
	if err := fs.Parse(args); err != nil {
		return devserver.StartOptions{}, err
	}
	if fs.NArg() > 0 {
		return devserver.StartOptions{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	lvl, err := logLevel(*level)
	if err != nil {
		return devserver.StartOptions{}, err
	}
	if *ip == "localhost" {
		*ip = "127.0.0.1" // the server wants an address
	}
	opts := devserver.StartOptions{
		FrontendIP: *ip, FrontendPort: *port, FrontendHTTPPort: *httpPort,
		Namespaces:   append([]string{"default"}, nss...),
		DatabaseFile: *dbFile, MetricsPort: *metrics, PProfPort: *pprof,
		Logger:   slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl})),
		LogLevel: lvl,
		// A cluster of one, named as the CLI names it; the CLI also makes up the cluster's id
		// at every start.
		ClusterID: uuid.NewString(), MasterClusterName: "active", CurrentClusterName: "active", InitialFailoverVersion: 1,
	}
	if !*headless {
		opts.UIIP, opts.UIPort = *uiIP, *uiPort
		if opts.UIIP == "" {
			opts.UIIP = *ip
		}
		if opts.UIPort == 0 {
			opts.UIPort = min(*port+1000, 65535)
		}
	}
	if opts.SearchAttributes, err = searchAttributes(sas); err != nil {
		return devserver.StartOptions{}, err
	}
	if opts.DynamicConfigValues, err = dynamicConfig(dyn); err != nil {
		return devserver.StartOptions{}, err
	}
	if opts.SqlitePragmas, err = keyValues("--sqlite-pragma", prg); err != nil {
		return devserver.StartOptions{}, err
	}
	return opts, nil
}

func keyValues(flagName string, items []string) (map[string]string, error) {
	out := make(map[string]string, len(items))
	for _, item := range items {
		k, v, ok := strings.Cut(item, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want NAME=VALUE", flagName, item)
		}
		out[k] = v
	}
	return out, nil
}

// searchAttributes reads NAME=TYPE with the type's short name in any case (Keyword, Text, Int…).
func searchAttributes(items []string) (map[string]enums.IndexedValueType, error) {
	kv, err := keyValues("--search-attribute", items)
	if err != nil {
		return nil, err
	}
	out := make(map[string]enums.IndexedValueType, len(kv))
	for name, typ := range kv {
		for short, v := range enums.IndexedValueType_shorthandValue {
			if strings.EqualFold(typ, short) {
				out[name] = enums.IndexedValueType(v)
			}
		}
		if out[name] == enums.INDEXED_VALUE_TYPE_UNSPECIFIED {
			return nil, fmt.Errorf("--search-attribute %s=%s: unknown type", name, typ)
		}
	}
	return out, nil
}

// dynamicConfig reads KEY=JSON over the CLI's defaults. A whole number becomes an int, which is
// the only integer type dynamic config takes.
func dynamicConfig(items []string) (map[string]any, error) {
	out := make(map[string]any, len(items)+len(cliDefaults))
	for k, v := range cliDefaults {
		out[k] = v
	}
	for _, item := range items {
		k, raw, ok := strings.Cut(item, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--dynamic-config-value %q: want KEY=JSON", item)
		}
		dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil || dec.InputOffset() != int64(len(raw)) {
			return nil, fmt.Errorf("--dynamic-config-value %s: %q is not one JSON value", k, raw)
		}
		if n, isNum := v.(json.Number); isNum {
			if i, err := n.Int64(); err == nil {
				v = int(i)
			} else if f, err := n.Float64(); err == nil {
				v = f
			}
		}
		out[k] = v
	}
	return out, nil
}
