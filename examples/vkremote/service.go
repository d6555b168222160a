package vkremote

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServiceConfig sets the delays of a Service, on the time package's clock
// (in a testing/synctest bubble, the bubble's).
type ServiceConfig struct {
	// Latency is how long every request takes before the service handles it.
	Latency time.Duration
	// StartDelay is how long a group stays GroupPending after it is
	// created (pulling images, scheduling) before its containers run.
	StartDelay time.Duration
	// StopDelay is how long a container takes to exit after SIGTERM; a
	// grace period shorter than that kills it (exit code 137, "Killed").
	StopDelay time.Duration
}

// Service simulates the remote container service a provider of the
// remote-service shape forwards its pods to (a cloud's container
// instances, an HPC batch gateway, another cluster): an http.Handler with
// this JSON API (the types of api.go):
//
//	PUT    /v1/groups/{id}             create the group; 201 with it, or 200 with the group of that ID it runs already (unchanged)
//	GET    /v1/groups/{id}             200 with the group, 404 if it runs none of that ID
//	GET    /v1/groups?tag=KEY=VALUE... 200 with the groups carrying every tag given, ordered by ID
//	DELETE /v1/groups/{id}?grace=SECS  stop the containers (SIGTERM, then a kill once the grace period is over),
//	                                   wait for them, forget the group; 200 with its last state (GroupStopped), 404 if unknown
//	GET    /v1/healthz                 200 while the service is up, 503 once it is unhealthy (SetHealthy)
//
// Errors are an apiError with the HTTP status (404 NotFound, 400
// BadRequest). A group's containers run from StartDelay after the create
// until the delete: the service never stops or restarts them on its own.
// On delete a container exits StopDelay after SIGTERM with exit code 0,
// unless its env says otherwise (EnvStopAfter, EnvStopExitCode: the
// service's stand-in for an image whose SIGTERM handler does so).
type Service struct {
	cfg    ServiceConfig
	mux    *http.ServeMux
	mu     sync.Mutex
	groups map[string]*Group
	nextIP int
	// unhealthy: the health check answers 503 (SetHealthy).
	unhealthy bool
}

// SetHealthy makes the health check answer 200 (ok) or 503 from now on: a
// service that stays up but has lost its backend (its hosts, its
// scheduler). The groups it runs are left as they are.
func (s *Service) SetHealthy(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unhealthy = !ok
}

// NewService returns a service that runs no group.
func NewService(cfg ServiceConfig) *Service {
	s := &Service{cfg: cfg, mux: http.NewServeMux(), groups: map[string]*Group{}}
	s.mux.HandleFunc("PUT /v1/groups/{id}", s.create)
	s.mux.HandleFunc("GET /v1/groups/{id}", s.get)
	s.mux.HandleFunc("GET /v1/groups", s.list)
	s.mux.HandleFunc("DELETE /v1/groups/{id}", s.delete)
	s.mux.HandleFunc("GET /v1/healthz", s.healthz)
	return s
}

// ServeHTTP answers a request after the configured latency.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.wait(r, s.cfg.Latency) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// wait lets d pass, or answers false when the client gave up first.
func (s *Service) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// advanceLocked moves g to GroupRunning once its StartDelay is over.
func (s *Service) advanceLocked(g *Group) {
	now := time.Now()
	if g.State == GroupPending && !now.Before(g.Created.Add(s.cfg.StartDelay)) {
		g.State = GroupRunning
		g.Version++
		for i := range g.Containers {
			g.Containers[i].StartedAt = g.Created.Add(s.cfg.StartDelay)
		}
	}
}

func (s *Service) create(w http.ResponseWriter, r *http.Request) {
	var g Group
	if err := json.NewDecoder(r.Body).Decode(&g); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequest", "decoding the group: %v", err)
		return
	}
	id := r.PathValue("id")
	if g.ID != id || len(g.Containers) == 0 {
		writeError(w, http.StatusBadRequest, "BadRequest", "group %q: the body names group %q and has %d containers", id, g.ID, len(g.Containers))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.groups[id]; ok {
		s.advanceLocked(cur)
		writeJSON(w, http.StatusOK, cur)
		return
	}
	s.nextIP++
	g.State, g.Created, g.Version = GroupPending, time.Now(), 1
	g.IP = fmt.Sprintf("10.200.%d.%d", s.nextIP/250, s.nextIP%250+1)
	for i := range g.Containers {
		g.Containers[i] = Container{Name: g.Containers[i].Name, Image: g.Containers[i].Image,
			Command: g.Containers[i].Command, Args: g.Containers[i].Args, Env: g.Containers[i].Env}
	}
	s.groups[id] = &g
	s.advanceLocked(&g)
	writeJSON(w, http.StatusCreated, &g)
}

func (s *Service) healthz(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	unhealthy := s.unhealthy
	s.mu.Unlock()
	if unhealthy {
		writeError(w, http.StatusServiceUnavailable, "Unavailable", "the service has lost its backend")
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Service) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[r.PathValue("id")]
	if !ok {
		writeError(w, http.StatusNotFound, "NotFound", "no group %q", r.PathValue("id"))
		return
	}
	s.advanceLocked(g)
	writeJSON(w, http.StatusOK, g)
}

func (s *Service) list(w http.ResponseWriter, r *http.Request) {
	want := map[string]string{}
	for _, t := range r.URL.Query()["tag"] {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			writeError(w, http.StatusBadRequest, "BadRequest", "tag %q is not KEY=VALUE", t)
			return
		}
		want[k] = v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*Group{}
	for _, g := range s.groups {
		match := true
		for k, v := range want {
			match = match && g.Tags[k] == v
		}
		if match {
			s.advanceLocked(g)
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	writeJSON(w, http.StatusOK, out)
}

func (s *Service) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	grace, err := strconv.ParseInt(r.URL.Query().Get("grace"), 10, 64)
	if err != nil || grace < 0 {
		writeError(w, http.StatusBadRequest, "BadRequest", "grace %q is not a number of seconds", r.URL.Query().Get("grace"))
		return
	}
	// SIGTERM now; each container exits after its stop delay, or is killed
	// when the grace period ends first.
	start := time.Now()
	var ends []stopEnd
	last := time.Duration(0)
	s.mu.Lock()
	g, ok := s.groups[id]
	if ok {
		s.advanceLocked(g)
		for _, c := range g.Containers {
			ends = append(ends, s.stopOf(c, time.Duration(grace)*time.Second))
			last = max(last, ends[len(ends)-1].after)
		}
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "NotFound", "no group %q", id)
		return
	}
	if !s.wait(r, last) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups[id] != g {
		writeError(w, http.StatusNotFound, "NotFound", "no group %q", id)
		return
	}
	delete(s.groups, id)
	for i := range g.Containers {
		c := &g.Containers[i]
		c.FinishedAt, c.ExitCode, c.Reason = start.Add(ends[i].after), ends[i].code, ends[i].reason
		if c.StartedAt.IsZero() { // deleted while pending: it never ran
			c.ExitCode, c.Reason = 137, "Killed"
		}
	}
	g.State = GroupStopped
	g.Version++
	writeJSON(w, http.StatusOK, g)
}

// stopEnd is how a container ends after SIGTERM: after this long, with
// this exit code and reason.
type stopEnd struct {
	after  time.Duration
	code   int32
	reason string
}

// stopOf is how container c ends after SIGTERM with grace: after its stop
// delay (EnvStopAfter, else the service's StopDelay) with its exit code
// (EnvStopExitCode, else 0), or killed (137) when grace ends first.
func (s *Service) stopOf(c Container, grace time.Duration) stopEnd {
	e := stopEnd{after: s.cfg.StopDelay, reason: "Completed"}
	for _, v := range c.Env {
		switch v.Name {
		case EnvStopAfter:
			if f, err := strconv.ParseFloat(v.Value, 64); err == nil && f >= 0 {
				e.after = time.Duration(f * float64(time.Second))
			}
		case EnvStopExitCode:
			if n, err := strconv.Atoi(v.Value); err == nil {
				e.code = int32(n & 0xff)
			}
		}
	}
	if e.code != 0 {
		e.reason = "Error"
	}
	if grace < e.after {
		e = stopEnd{after: grace, code: 137, reason: "Killed"}
	}
	return e
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, kind, format string, args ...any) {
	writeJSON(w, code, apiError{Code: kind, Message: fmt.Sprintf(format, args...)})
}
