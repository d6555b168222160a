// Package kubebackend is a KRI provider that mirrors every pod into a
// backend Kubernetes cluster through client-go and lets that cluster's
// kubelet run it — the shape of secretflow/kuscia's K8sProvider
// (pkg/agent/provider/pod/k8s_provider.go) — with a simulated backend
// kubelet to run it against. It passes the conformance suite with client-go's
// fake clientset as the backend's API server (TestConformance) and, with
// KRI_E2E_KUBECONFIG set, against a real kube-apiserver (package e2e).
//
// # The provider
//
// Provider talks to the backend only through a kubernetes.Interface and a
// shared informer on its namespace (the mirrors carrying the provider's
// agent label):
//
//   - SyncPod creates the pod's mirror when it has none: the pod's spec,
//     bound to Options.NodeName (or left to the backend's scheduler), with
//     its labels and annotations plus the agent label and the agent pod's
//     UID, namespace and name, in the backend namespace (created when
//     missing), named MirrorName (the pod's name and a hash of namespace,
//     name and UID, so that a pod created again under the same name gets a
//     mirror of its own). It updates the images of an existing mirror
//     (retried on conflicts), and reports each container's latest start to
//     the ReasonCache from the mirror's status: ErrImagePull,
//     ImagePullBackOff, RunContainerError as failures (an error naming the
//     container), CrashLoopBackOff as a back-off (no error), Running or
//     Terminated as success. The backend starts containers on its own time,
//     so a start shows in the ReasonCache one SyncPod after it happened.
//   - GetPodStatus converts the mirror's status with podstatus.RuntimeStatus:
//     the current and the previous run of each container, ordered by restart
//     count although the API keeps whole seconds; no sandboxes.
//   - GetPods lists the agent's pods that have a mirror, from the informer.
//   - RefreshPodStatus copies the mirror's container statuses by name, as
//     K8sProvider does.
//   - KillPod deletes the mirror with the kubelet's runtime's grace period
//     (kri.RuntimeGracePeriod: override, else DeletionGracePeriodSeconds,
//     else TerminationGracePeriodSeconds; at least 2s) and waits until it
//     is gone from the API server and the informer: the pod is then
//     forgotten (GetPodStatus reports it unknown, GetPods does not list
//     it), as with K8sProvider.
//   - DeletePod and CleanupPods do nothing, as in K8sProvider: the provider
//     declares no orphan cleanup (the agent kills the orphans GetPods lists).
//   - Stop ends the informer; the mirrors stay (they outlive the agent).
//
// # Notifications
//
// Provider implements kri.PodSyncNotifier with an embedded
// podsync.Notifier. Its calls of the agent's HandlePodSyncByUID come from
// its informer: every add, update or delete of a mirror (a status the
// backend's kubelet wrote — the simulated Kubelet's included — a deletion,
// the mirror SyncPod created) is a call with the UID of the agent's pod it
// stands for, as kuscia's K8sProvider relays its informer's updates and
// deletes (k8s_provider.go handleBackendPodChanged). Restarts, back-offs,
// probes and pull retries are the backend's, so they arrive the same way.
// The one retry of its own: a SyncPod that failed on a call to the backend's
// API server is followed by a call SyncRetryPeriod later.
//
// # The simulated backend kubelet
//
// Kubelet plays the pods bound to its node with package workload's
// vocabulary, on an injectable k8s.io/utils/clock: init containers in order,
// restart policies with a crash-loop back-off, image pull failures as
// Waiting ErrImagePull then ImagePullBackOff (ErrImageNeverPull under
// imagePullPolicy Never), env with $(VAR) expansion, termination messages
// (workload.Behaviour.TerminationMessage), graceful deletion (SIGTERM:
// a container that exits on it exits 143 at once, one that ignores it is
// killed with 137 when the grace period ends; then the terminal status and a
// delete with grace 0). It builds every status with podstatus.Generate from
// its runtime view, as a kubelet does, and writes it through the status
// subresource (UpdateStatus, retried on conflicts) as the API keeps it:
// timestamps in whole seconds. It uses nothing but the API, so the same
// Kubelet plays the pods of a real kube-apiserver.
//
// # The fake clientset and a real API server
//
// client-go's fake clientset is no API server: it deletes at once, checks no
// resourceVersion and keeps no separate status. NewFakeClientset returns the
// kit's fake API server (github.com/kri-kit/testkit/sim/apiserver, the one
// the VK suite runs VK over), which adds what the provider and the Kubelet
// rely on — UIDs and creation timestamps on create, graceful deletion as the
// API server's pod strategy does it, conflicts on a stale resourceVersion, a
// status subresource, label and field selectors — and both are written for a
// real API server's semantics (conflicts retried, status subresource,
// deletionTimestamp, UID preconditions, namespaces that must exist).
//
// # The kri freedoms it uses
//
//   - One run per container and its last termination (GetPodStatus): "a
//     remote provider may report only the newest instance of each name."
//   - No sandboxes: "a remote provider may report none."
//   - The backend's statuses (RefreshPodStatus): "a remote provider may
//     replace container statuses with its backend's."
//   - Restarts by the backend, with back-off: "A provider may delay a
//     restart ... or leave restarts to its backend."
//   - A minimum grace period of 1s: "A provider may give at least a minimum
//     of its own instead of a shorter grace period."
//
// # What it does not do
//
// ConfigMaps and Secrets of the pod's volumes, DNS settings, hooks, logs and
// leader election of K8sProvider; pod IPs are the backend's. No node
// provider.
//
// # The kuscia-faithful mode
//
// KusciaFaithful (NewKusciaFaithful; NewKusciaFaithfulBackend with a
// simulated kubelet) behaves as kuscia's K8sProvider does, bugs included, so
// that the suite's verdict on it can be tested: backend pods named by the pod's
// name alone and created only when the informer's cache has none of that name,
// a status without the pod's UID and with the API's container IDs whole, no
// ReasonCache, a KillPod that does not wait, a Stop that does nothing, and
// K8sProvider's notifications: on the informer's updates and deletes only.
// TestKusciaFaithfulVerdict runs the suite against it in a child process and
// checks the exact set of specs it fails. It is not a provider to use.
//
// # Using it
//
//	b, err := kubebackend.NewBackend(ctx, kubebackend.NewFakeClientset(),
//		kubebackend.Options{Namespace: "backend", NodeName: "sim-node"}, kubebackend.KubeletOptions{})
//	if err != nil { ... }
//	go b.Start(ctx)
//	defer b.Stop()
//	err = b.SyncPod(ctx, pod, nil, reasonCache) // again at each call of the agent's handler
package kubebackend
