// Package apiserver is an in-process fake API server for tests: client-go's
// fake clientset (k8s.io/client-go/kubernetes/fake) made faithful where
// node agents depend on how the API server handles pods — virtual-kubelet's
// PodController and NodeController (package vk of the kit), and the
// simulated kubelet and providers of examples/kubebackend. It imports
// neither the kubelet (k8s.io/kubernetes) nor virtual-kubelet.
//
// # The contract
//
// New returns a Server, a *fake.Clientset whose pods get what the API
// server gives them and change as it changes them:
//
//   - Create stamps every object with a UID and a creationTimestamp (VK's
//     lease controller names the node's UID as its lease's owner); a pod's
//     are always the server's own, as the API server sets them whatever the
//     client sent, and the pod gets a resourceVersion. Every write of a pod
//     (create, update, status update, graceful delete) takes the next number
//     of one counter, from 1 on. A pod whose namespace is not the request's
//     is refused (BadRequest).
//   - Update and UpdateStatus of a pod whose resourceVersion is set and is
//     not the stored one fail with a conflict, and so do those whose UID is
//     set and is not the stored one. Update keeps the stored status,
//     UpdateStatus (the status subresource) changes only the status and
//     keeps the stored metadata and spec, as the API server's pod strategies
//     do (PrepareForUpdate): a stale status update never undoes a deletion.
//     Server.StatusHistory lists every status written through UpdateStatus.
//   - Delete of a pod is graceful, as the API server's pod strategy makes it
//     (CheckGracefulDelete): the grace period is
//     DeleteOptions.GracePeriodSeconds, else the pod's
//     terminationGracePeriodSeconds, else 30s, and 0 for a pod bound to no
//     node or in a terminal phase (Succeeded, Failed). With a grace period
//     above 0 the pod stays, with deletionTimestamp now+grace and
//     deletionGracePeriodSeconds, which a later delete may only shorten;
//     the node's kubelet deletes it with grace 0 once its containers have
//     stopped. A UID precondition that does not match fails with a
//     conflict; a pod that does not exist, with NotFound.
//   - List and Watch of pods honour the label selector and the field
//     selector, over the pod's field labels the API server knows
//     (metadata.name, metadata.namespace, spec.nodeName,
//     spec.restartPolicy, spec.schedulerName, spec.serviceAccountName,
//     spec.hostNetwork, status.phase, status.podIP,
//     status.nominatedNodeName); another field label is refused
//     (BadRequest). A watch reports a pod that comes to match as Added and
//     one that stops matching as Deleted, as the API server's filtered
//     watches do.
//   - A List of pods carries the resourceVersion of the latest write, and a
//     Watch from a resourceVersion reports every write of a pod since, in
//     order, as the API server's watch cache does: an informer that lists,
//     then watches from its list's resourceVersion, sees a pod created and
//     written in between as its creation and each write (its update
//     handler is called), not as one Added of its latest version. The
//     Server keeps the latest 10,000 writes of pods; a Watch from before
//     them fails with 410 Gone (Expired), and an informer lists again. A
//     Watch from no resourceVersion (or "0") first reports every pod that
//     matches as Added, then the changes.
//
// Times come from the time package, so inside a testing/synctest bubble
// they are the bubble's clock. A Server is safe for concurrent use, as the
// fake clientset is: its reactors run one at a time. Every watch runs a
// goroutine until it is stopped (informers stop theirs when they stop) or
// the fake closes it.
//
// # Known limitations
//
// What the fake still does not do, so that neither the kit's suites nor
// the providers it tests rely on it:
//
//   - Only pods are faithful. Other resources are client-go's fake
//     clientset's but for the UID and creationTimestamp stamped on create:
//     no resourceVersion check, no status subresource of their own, no
//     selectors on watches, deletion at once.
//   - Objects handed to New are stored as given (no UID, timestamp or
//     resourceVersion is added); the reactors see only what is written
//     through the clientset. The UID and creationTimestamp of an object
//     other than a pod are set on the object the caller handed to Create
//     (client-go's fake passes that object on), not only on the copy
//     stored.
//   - Patch, Apply and DeleteCollection of pods are the fake's: they bump no
//     resourceVersion, check none, and delete at once, not gracefully.
//   - Nothing is validated or defaulted (an invalid pod IP or an empty
//     container name is accepted), no admission runs, finalizers and owner
//     references hold nothing back, namespaces need not exist.
//   - A watch sends no bookmarks, and the writes it resumes over are those
//     of the Server's reactors: a Patch, Apply or DeleteCollection of a pod
//     is reported only to the watches open when it happens. A malformed
//     label or field selector panics inside client-go's fake before the
//     Server sees it.
//   - Timestamps keep the time package's precision; the API server keeps
//     whole seconds.
package apiserver
