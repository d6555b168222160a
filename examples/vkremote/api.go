package vkremote

import "time"

// The wire format of the remote service: JSON over HTTP. It is the
// service's own model, not Kubernetes': the provider translates a pod into
// a Group (toGroup) and a Group's state back into a pod status (podStatus).

// Group is what the service runs for one pod: a set of containers started
// together and stopped together.
type Group struct {
	// ID is chosen by the client when it creates the group (the provider
	// uses the pod's UID), so that a retried create finds the group the
	// first attempt made.
	ID string `json:"id"`
	// Tags are the client's labels; the service filters lists by them
	// (List). The provider tags each group with its node, the pod's
	// namespace and name.
	Tags       map[string]string `json:"tags,omitempty"`
	Containers []Container       `json:"containers"`

	// Set by the service.

	// State is GroupPending until the containers run, then GroupRunning;
	// GroupStopped only in the answer to Delete.
	State   string    `json:"state,omitempty"`
	Created time.Time `json:"created"`
	IP      string    `json:"ip,omitempty"`
	// Version grows with every change of State: a poller compares it to
	// the version it saw last.
	Version int64 `json:"version"`
}

// The states of a Group.
const (
	GroupPending = "Pending"
	GroupRunning = "Running"
	GroupStopped = "Stopped"
)

// Container is one container of a Group: what to run, and (set by the
// service) how it runs.
type Container struct {
	Name    string   `json:"name"`
	Image   string   `json:"image"`
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Env     []EnvVar `json:"env,omitempty"`

	// Set by the service.

	StartedAt  time.Time `json:"startedAt,omitzero"`
	FinishedAt time.Time `json:"finishedAt,omitzero"`
	ExitCode   int32     `json:"exitCode"`
	// Reason is why an exited container ended: "Completed" (it exited 0
	// after SIGTERM), "Error" (it exited with another code) or "Killed"
	// (the grace period ran out).
	Reason string `json:"reason,omitempty"`
}

// The env of a Container that tells the service how it ends after SIGTERM
// (a real service runs the image, whose SIGTERM handler decides): its
// handler takes EnvStopAfter seconds (decimals allowed; default the
// service's StopDelay), then exits with EnvStopExitCode (default 0).
const (
	EnvStopAfter    = "STOP_AFTER_SECONDS"
	EnvStopExitCode = "STOP_EXIT_CODE"
)

// EnvVar is an environment variable of a Container.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// apiError is the body of every answer whose status is 400 or above.
type apiError struct {
	Code    string `json:"code"` // NotFound, BadRequest
	Message string `json:"message"`
}
