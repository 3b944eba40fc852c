// Command wire-format drives one kind of traffic against a Kubernetes API server in one wire
// format and prints the API server's CPU time it cost, read from /proc/<pid>/stat before and
// after each phase. bench/wire-formats.ts runs it per format and round on a local control plane.
//
// Kinds: "configmaps" (built-in: JSON or protobuf) and "benchparents" (the benchmark's custom
// resource: JSON or CBOR; CBOR needs the API server's CBORServingAndStorage gate and the client's
// KUBE_FEATURE_ClientsAllowCBOR and KUBE_FEATURE_ClientsPreferCBOR, which the caller sets).
// Phases, with a watch of the namespace open in the same format throughout: create N objects,
// then update each one (ConfigMaps: their data; parents: their status), each phase ending when
// the watch has delivered its events; then, the watch closed, five paginated lists of the
// namespace (500 a page). The objects are then deleted, outside the measurement.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var parents = schema.GroupVersionResource{
	Group: "bench.metacontroller-ts.dev", Version: "v1", Resource: "benchparents",
}

// phase is what one phase cost: the API server's CPU and the wall time.
type phase struct {
	APIServerCPUMs float64 `json:"apiServerCpuMs"`
	WallMs         float64 `json:"wallMs"`
}

// result is the line the program prints.
type result struct {
	Kind   string `json:"kind"`
	Format string `json:"format"`
	Count  int    `json:"count"`
	Create phase  `json:"create"`
	Update phase  `json:"update"`
	List   phase  `json:"list"`
	// WatchReopened counts the times the server ended the watch and it was opened again.
	WatchReopened int64 `json:"watchReopened"`
}

// traffic is one kind's operations in one format.
type traffic interface {
	// watch watches the namespace from resourceVersion ("": from now).
	watch(ctx context.Context, resourceVersion string) (watch.Interface, error)
	create(ctx context.Context, i int) error
	update(ctx context.Context, i int) error
	// listPage lists one page of 500 and returns the continue token ("" after the last).
	listPage(ctx context.Context, token string) (string, error)
	// empty is true when the namespace holds none of the objects.
	empty(ctx context.Context) bool
	deleteAll(ctx context.Context) error
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	pid := flag.Int("apiserver-pid", 0, "pid of kube-apiserver, for /proc/<pid>/stat")
	kind := flag.String("kind", "configmaps", "configmaps or benchparents")
	format := flag.String("format", "json", "json, protobuf (configmaps) or cbor (benchparents)")
	namespace := flag.String("namespace", "default", "namespace to work in")
	count := flag.Int("count", 10000, "objects")
	inFlight := flag.Int("in-flight", 16, "requests in flight")
	flag.Parse()
	if err := run(*kubeconfig, *pid, *kind, *format, *namespace, *count, *inFlight); err != nil {
		fmt.Fprintln(os.Stderr, "wire-format:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, pid int, kind, format, namespace string, count, inFlight int) error {
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// No client-side throttle: the server's cost is measured, not client-go's limiter.
	config.QPS, config.Burst = -1, 0
	t, err := newTraffic(config, kind, format, namespace)
	if err != nil {
		return err
	}
	ctx := context.Background()
	var events, reopened atomic.Int64
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := watchEvents(watchCtx, t, &events, &reopened); err != nil {
		return err
	}
	out := result{Kind: kind, Format: format, Count: count}
	if out.Create, err = measure(pid, count, inFlight, &events, int64(count), func(i int) error {
		return retrying(func() error { return t.create(ctx, i) })
	}); err != nil {
		return err
	}
	if out.Update, err = measure(pid, count, inFlight, &events, int64(2*count), func(i int) error {
		return retrying(func() error { return t.update(ctx, i) })
	}); err != nil {
		return err
	}
	stopWatch()
	out.WatchReopened = reopened.Load()
	if out.List, err = measureLists(pid, func() error { return listAll(ctx, t) }); err != nil {
		return err
	}
	// The figures first: a deletion the loaded server does not finish in time must not lose them.
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return err
	}
	return deleteAll(ctx, t)
}

// watchEvents opens the watch and counts its events in the background until ctx ends; a watch the
// server ends (a loaded server closes watchers that fall behind) is opened again from the last
// resourceVersion seen, so no event is missed or counted twice.
func watchEvents(ctx context.Context, t traffic, events, reopened *atomic.Int64) error {
	w, err := t.watch(ctx, "")
	if err != nil {
		return err
	}
	go func() {
		lastVersion := ""
		for {
			for event := range w.ResultChan() {
				if object, err := meta.Accessor(event.Object); err == nil && event.Type != watch.Error {
					lastVersion = object.GetResourceVersion()
					events.Add(1)
				}
			}
			for ctx.Err() == nil {
				if w, err = t.watch(ctx, lastVersion); err == nil {
					reopened.Add(1)
					break
				}
				time.Sleep(time.Second)
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	return nil
}

// newTraffic picks the client and content type for a kind and format.
func newTraffic(config *rest.Config, kind, format, namespace string) (traffic, error) {
	switch {
	case kind == "configmaps" && (format == "json" || format == "protobuf"):
		if format == "protobuf" {
			config.ContentType = "application/vnd.kubernetes.protobuf"
			config.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
		} else {
			config.ContentType = "application/json"
			config.AcceptContentTypes = "application/json"
		}
		clients, err := kubernetes.NewForConfig(config)
		if err != nil {
			return nil, err
		}
		return &configMaps{client: clients.CoreV1().ConfigMaps(namespace), namespace: namespace}, nil
	case kind == "benchparents" && (format == "json" || format == "cbor"):
		cbor := os.Getenv("KUBE_FEATURE_ClientsPreferCBOR") == "true"
		if cbor != (format == "cbor") {
			return nil, fmt.Errorf("format %s needs KUBE_FEATURE_ClientsAllowCBOR and KUBE_FEATURE_ClientsPreferCBOR set to %t", format, !cbor)
		}
		client, err := dynamic.NewForConfig(config)
		if err != nil {
			return nil, err
		}
		return &customResources{client: client.Resource(parents).Namespace(namespace), namespace: namespace}, nil
	}
	return nil, fmt.Errorf("no format %q for kind %q", format, kind)
}

// measure runs op for 0..count-1 with inFlight at once, waits until the watch has seen
// wantEvents, and returns the API server's CPU and the wall time it took.
func measure(pid, count, inFlight int, events *atomic.Int64, wantEvents int64, op func(int) error) (phase, error) {
	before, err := cpuMs(pid)
	if err != nil {
		return phase{}, err
	}
	started := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, inFlight)
	for w := 0; w < inFlight; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < count; i = int(next.Add(1) - 1) {
				if err := op(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return phase{}, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for events.Load() < wantEvents {
		if time.Now().After(deadline) {
			return phase{}, fmt.Errorf("the watch saw %d of %d events", events.Load(), wantEvents)
		}
		time.Sleep(20 * time.Millisecond)
	}
	wall := time.Since(started)
	after, err := cpuMs(pid)
	if err != nil {
		return phase{}, err
	}
	return phase{APIServerCPUMs: after - before, WallMs: float64(wall.Microseconds()) / 1000}, nil
}

// retrying runs op until it succeeds, retrying up to 10 times, 1 s apart, what a loaded server
// refuses for a while (timeouts, 429, 5xx). After a retry, AlreadyExists or Conflict means an
// earlier try got through (its response was lost), and counts as done.
func retrying(op func() error) error {
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil || (attempt > 1 && (apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err))) {
			return nil
		}
		transient := apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
			apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) ||
			apierrors.IsServiceUnavailable(err)
		if !transient || attempt >= 10 {
			return err
		}
		time.Sleep(time.Second)
	}
}

// deleteAll deletes the namespace's objects; when the server times out first (it goes on
// deleting), waits up to 5 minutes until a list finds none, so the next run starts clean.
func deleteAll(ctx context.Context, t traffic) error {
	if err := t.deleteAll(ctx); err == nil {
		return nil
	}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		if next, err := t.listPage(ctx, ""); err == nil && next == "" && t.empty(ctx) {
			return nil
		}
	}
	return fmt.Errorf("the objects were not deleted within 5 minutes")
}

// listAll reads the whole namespace in pages of 500, as an informer's initial list does.
func listAll(ctx context.Context, t traffic) error {
	token := ""
	for {
		next, err := t.listPage(ctx, token)
		if err != nil || next == "" {
			return err
		}
		token = next
	}
}

// measureLists lists the namespace 5 times (the lists of 5 informers, or restarts) and returns
// the API server's CPU and the wall time it took.
func measureLists(pid int, list func() error) (phase, error) {
	before, err := cpuMs(pid)
	if err != nil {
		return phase{}, err
	}
	started := time.Now()
	for i := 0; i < 5; i++ {
		if err := list(); err != nil {
			return phase{}, err
		}
	}
	wall := time.Since(started)
	after, err := cpuMs(pid)
	if err != nil {
		return phase{}, err
	}
	return phase{APIServerCPUMs: after - before, WallMs: float64(wall.Microseconds()) / 1000}, nil
}

// cpuMs is utime + stime of pid in ms (fields 14 and 15 of /proc/<pid>/stat, at 100 ticks/s).
func cpuMs(pid int) (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	text := string(stat)
	fields := strings.Fields(text[strings.LastIndexByte(text, ')')+2:])
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cannot read /proc/%d/stat", pid)
	}
	return (utime + stime) * 10, nil
}

// configMaps is built-in traffic: typed client, JSON or protobuf.
type configMaps struct {
	client interface {
		Create(context.Context, *corev1.ConfigMap, metav1.CreateOptions) (*corev1.ConfigMap, error)
		Update(context.Context, *corev1.ConfigMap, metav1.UpdateOptions) (*corev1.ConfigMap, error)
		Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
		List(context.Context, metav1.ListOptions) (*corev1.ConfigMapList, error)
		DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error
	}
	namespace string
	mu        sync.Mutex
	created   map[int]*corev1.ConfigMap
}

// configMap is shaped like the benchmark's children: a label and three short data fields.
func configMap(i int, n string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("p%d-a", i),
			Labels: map[string]string{"controller-uid": fmt.Sprintf("00000000-0000-0000-0000-%012d", i)},
		},
		Data: map[string]string{"parent": fmt.Sprintf("p%d", i), "part": "a", "n": n},
	}
}

func (c *configMaps) watch(ctx context.Context, resourceVersion string) (watch.Interface, error) {
	return c.client.Watch(ctx, metav1.ListOptions{ResourceVersion: resourceVersion})
}

func (c *configMaps) create(ctx context.Context, i int) error {
	made, err := c.client.Create(ctx, configMap(i, "1"), metav1.CreateOptions{})
	if err == nil {
		c.mu.Lock()
		if c.created == nil {
			c.created = map[int]*corev1.ConfigMap{}
		}
		c.created[i] = made
		c.mu.Unlock()
	}
	return err
}

func (c *configMaps) update(ctx context.Context, i int) error {
	c.mu.Lock()
	current := c.created[i].DeepCopy()
	c.mu.Unlock()
	current.Data["n"] = "2"
	_, err := c.client.Update(ctx, current, metav1.UpdateOptions{})
	return err
}

func (c *configMaps) listPage(ctx context.Context, token string) (string, error) {
	page, err := c.client.List(ctx, metav1.ListOptions{Limit: 500, Continue: token})
	if err != nil {
		return "", err
	}
	return page.Continue, nil
}

func (c *configMaps) empty(ctx context.Context) bool {
	page, err := c.client.List(ctx, metav1.ListOptions{Limit: 1})
	return err == nil && len(page.Items) == 0
}

func (c *configMaps) deleteAll(ctx context.Context) error {
	return c.client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

// customResources is custom-resource traffic: the dynamic client, JSON or CBOR.
type customResources struct {
	client    dynamic.ResourceInterface
	namespace string
	mu        sync.Mutex
	created   map[int]*unstructured.Unstructured
}

func (c *customResources) watch(ctx context.Context, resourceVersion string) (watch.Interface, error) {
	return c.client.Watch(ctx, metav1.ListOptions{ResourceVersion: resourceVersion})
}

func (c *customResources) create(ctx context.Context, i int) error {
	parent := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.metacontroller-ts.dev/v1",
		"kind":       "BenchParent",
		"metadata":   map[string]any{"name": fmt.Sprintf("p%d", i)},
		"spec":       map[string]any{"n": int64(1)},
	}}
	made, err := c.client.Create(ctx, parent, metav1.CreateOptions{})
	if err == nil {
		c.mu.Lock()
		if c.created == nil {
			c.created = map[int]*unstructured.Unstructured{}
		}
		c.created[i] = made
		c.mu.Unlock()
	}
	return err
}

// update writes the status the engine writes after a sync.
func (c *customResources) update(ctx context.Context, i int) error {
	c.mu.Lock()
	current := c.created[i].DeepCopy()
	c.mu.Unlock()
	current.Object["status"] = map[string]any{
		"ready": true, "observedGeneration": current.GetGeneration(),
	}
	_, err := c.client.UpdateStatus(ctx, current, metav1.UpdateOptions{})
	return err
}

func (c *customResources) listPage(ctx context.Context, token string) (string, error) {
	page, err := c.client.List(ctx, metav1.ListOptions{Limit: 500, Continue: token})
	if err != nil {
		return "", err
	}
	return page.GetContinue(), nil
}

func (c *customResources) empty(ctx context.Context) bool {
	page, err := c.client.List(ctx, metav1.ListOptions{Limit: 1})
	return err == nil && len(page.Items) == 0
}

func (c *customResources) deleteAll(ctx context.Context) error {
	return c.client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}
