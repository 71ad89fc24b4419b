// Package gns3proxy puts the copilot in front of a GNS3 controller: a reverse proxy that carries
// GNS3's web UI, REST API, WebSockets and streams at the copilot's own address, so GNS3's web UI
// and the copilot share one origin.
package gns3proxy

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

// CopilotPagePath is where the copilot's own chat page lives when the copilot fronts GNS3: the
// root belongs to GNS3, whose web UI the user opens there.
const CopilotPagePath = "/copilot/"

// New forwards requests to the GNS3 controller at target, so that GNS3's web UI, its
// REST API, its WebSockets (consoles, notifications) and its streams (notifications, packet
// captures) are all reachable at the copilot's own address. GNS3's web UI sends every request to
// the origin it was loaded from; with the copilot in front, its AI chat panel reaches the
// copilot and everything else reaches GNS3.
func New(target string) (http.Handler, error) {
	u, err := url.Parse(strings.TrimRight(target, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the GNS3 URL %q must be an http:// or https:// URL", target)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// A web UI keeps many requests to one controller in flight (the map, every node's status,
	// consoles); the default of two idle connections per host would reconnect all the time.
	transport.MaxIdleConnsPerHost = 64
	transport.ResponseHeaderTimeout = 0 // streams and long GNS3 operations answer when they are done
	transport.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u) // also sets the Host header to GNS3's own, as GNS3 expects
			r.SetXForwarded()
		},
		Transport: transport,
		// Notifications and capture streams must reach the browser as they happen.
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			relativeLocation(resp, u)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, http.ErrAbortHandler) || r.Context().Err() != nil {
				return // the browser went away; nobody is left to answer
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, `{"message":%q}`, "The GNS3 controller at "+u.Host+" cannot be reached through the copilot right now; check that it is running. ("+err.Error()+")")
		},
	}
	return p, nil
}

// relativeLocation turns a redirect to GNS3's own address into one relative to whatever address
// the browser used, so the browser stays on the copilot's origin.
func relativeLocation(resp *http.Response, target *url.URL) {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return
	}
	l, err := url.Parse(loc)
	if err != nil || !l.IsAbs() || !strings.EqualFold(l.Host, target.Host) {
		return
	}
	rel := l.EscapedPath()
	if rel == "" {
		rel = "/"
	}
	if l.RawQuery != "" {
		rel += "?" + l.RawQuery
	}
	if l.Fragment != "" {
		rel += "#" + l.EscapedFragment()
	}
	resp.Header.Set("Location", rel)
}
