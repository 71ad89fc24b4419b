package fakegns3

import (
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coder/websocket"
)

// GNS3's web UI is served by the controller itself, under /static/web-ui/, and talks to the
// controller it was loaded from. With WithWebUI the fake serves a production build of it (see
// shared/gns3-web-ui/) and answers the extra routes the UI needs to sign in and draw a project,
// so browser tests can drive GNS3's own AI panel through the copilot's --proxy-gns3.

// Routes the web UI needs beyond what the copilot itself calls.
const (
	OpLogin        Op = "POST /v3/access/users/login"
	OpListComputes Op = "GET /v3/computes"
	OpListDrawings Op = "GET /v3/projects/{project_id}/drawings"
	// OpSymbol is GET /v3/symbols/{symbol_id}/raw (and /dimensions); a symbol id such as
	// ":/symbols/affinity/circle/blue/router.svg" holds slashes.
	OpSymbol Op = "GET /v3/symbols/{symbol_path...}"
	// The notification WebSockets the UI opens, with the token in ?token=: the controller's
	// (pings) and a project's (the notifications of OpNotifications).
	OpNotificationsWS        Op = "GET /v3/notifications/ws"
	OpProjectNotificationsWS Op = "GET /v3/projects/{project_id}/notifications/ws"
)

// WithWebUI serves the web UI build in dir at /static/web-ui/, as GNS3 serves its own
// gns3server/static/web-ui/, and redirects / to it.
func WithWebUI(dir string) Option { return func(s *Server) { s.webUI = dir } }

// webUIRoutes adds the routes of the web UI; the caller registers them on the fake's mux.
func (s *Server) webUIRoutes(mux *http.ServeMux, add func(Op, bool, handler)) {
	add(OpLogin, false, s.login)
	add(OpListComputes, true, s.listComputes)
	add(OpListDrawings, true, s.listDrawings)
	mux.HandleFunc(string(OpSymbol), s.symbol)
	mux.HandleFunc(string(OpNotificationsWS), s.notificationsWS(OpNotificationsWS))
	mux.HandleFunc(string(OpProjectNotificationsWS), s.notificationsWS(OpProjectNotificationsWS))
	if s.webUI == "" {
		return
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/static/web-ui/bundled", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("GET /static/web-ui/{file...}", s.webUIFile)
}

// webUIFile answers a file of the build, and index.html for any other path: the UI routes in the
// browser (bundled, controller/1/project/…), as GNS3's static handler does.
func (s *Server) webUIFile(w http.ResponseWriter, r *http.Request) {
	name := path.Clean("/" + r.PathValue("file"))
	full := filepath.Join(s.webUI, filepath.FromSlash(name))
	if st, err := os.Stat(full); err != nil || st.IsDir() {
		full = filepath.Join(s.webUI, "index.html")
	}
	http.ServeFile(w, r, full)
}

// login is the OAuth2 password form the web UI signs in with; it answers like authenticate.
func (s *Server) login(r *http.Request, body []byte, _ *user) (reply, *httpErr) {
	form, err := url.ParseQuery(string(body))
	if err != nil || !form.Has("username") || !form.Has("password") {
		return reply{}, errf(http.StatusUnprocessableEntity,
			"[{'type': 'missing', 'loc': ('body', 'username'), 'msg': 'Field required', 'input': None}, {'type': 'missing', 'loc': ('body', 'password'), 'msg': 'Field required', 'input': None}]")
	}
	u, ok := s.users[form.Get("username")]
	if !ok || u.password != form.Get("password") {
		return reply{}, errf(http.StatusUnauthorized, "Authentication was unsuccessful.")
	}
	return reply{200, map[string]string{"access_token": u.token, "token_type": "bearer"}}, nil
}

// listComputes answers the controller's own compute, the only one of a default install.
func (s *Server) listComputes(_ *http.Request, _ []byte, _ *user) (reply, *httpErr) {
	host, port := "127.0.0.1", 3080
	if u, err := url.Parse(s.URL); err == nil {
		host = u.Hostname()
		if p, err := strconv.Atoi(u.Port()); err == nil {
			port = p
		}
	}
	return reply{200, []map[string]any{{
		"compute_id": "local", "name": "local", "protocol": "http", "host": host, "port": port, "user": "gns3",
		"connected": true, "cpu_usage_percent": 3.1, "memory_usage_percent": 41.5, "disk_usage_percent": 52.8,
		"last_error": nil, "created_at": nil, "updated_at": nil,
		"capabilities": map[string]any{"version": s.version, "node_types": []string{"cloud", "ethernet_hub", "ethernet_switch",
			"frame_relay_switch", "atm_switch", "nat", "vpcs", "qemu"}, "platform": "linux", "cpus": 2, "memory": 8 << 30,
			"disk_size": 100 << 30},
	}}}, nil
}

// listDrawings answers no drawings: the fake's projects have only nodes and links.
func (s *Server) listDrawings(r *http.Request, _ []byte, u *user) (reply, *httpErr) {
	if _, e := s.projectFor(r, u, "Drawing.Audit", false); e != nil {
		return reply{}, e
	}
	return reply{200, []any{}}, nil
}

// symbolSVG stands in for every built-in symbol: the map needs an image of some size per node.
const symbolSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="60" height="60" viewBox="0 0 60 60">` +
	`<rect x="4" y="4" width="52" height="52" rx="10" fill="#4a90d9"/></svg>`

func (s *Server) symbol(w http.ResponseWriter, r *http.Request) {
	rest := r.PathValue("symbol_path")
	switch {
	case strings.HasSuffix(rest, "/raw"):
		w.Header().Set("Content-Type", "image/svg+xml")
		_, _ = w.Write([]byte(symbolSVG))
	case strings.HasSuffix(rest, "/dimensions"):
		writeJSON(w, http.StatusOK, map[string]int{"width": 60, "height": 60})
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	}
}

// notificationsWS serves a notification WebSocket: every message is one notification object, as
// on OpNotifications' lines. Browsers cannot set headers on a WebSocket, so the token comes in
// the query.
func (s *Server) notificationsWS(op Op) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.countAndWait(op, r) {
			return
		}
		if tok := r.URL.Query().Get("token"); tok != "" && r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		s.mu.Lock()
		u, herr := s.authUser(r)
		key := "" // the controller's stream hears only pings
		if herr == nil && op == OpProjectNotificationsWS {
			var p *project
			if p, herr = s.projectFor(r, u, "Project.Audit", false); p != nil {
				key = p.id
			}
		}
		if herr != nil {
			s.mu.Unlock()
			writeErr(w, herr)
			return
		}
		sub := s.subscribe(key)
		ping := s.notes.ping
		s.mu.Unlock()
		defer s.unsubscribe(key, sub)
		// The page's origin is the copilot's address in front of GNS3, as for GNS3 behind a proxy.
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := c.CloseRead(r.Context())
		s.pump(ctx, sub, ping, func(b []byte) error { return c.Write(ctx, websocket.MessageText, b) })
	}
}
