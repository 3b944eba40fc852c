// Command image-mirror serves image archives (the `docker save` layout oci-image writes) over the
// registry API, read-only, for a real node's containerd: a Pod whose image has no tag or the tag
// `latest` gets imagePullPolicy Always, so the kubelet pulls even an imported image, and with no
// registry reachable that pull would fail. containerd's hosts configuration sends docker.io
// pulls here first. It listens on a loopback address of the cluster's own network namespace.
//
//	image-mirror -addr 127.0.0.1:5000 ARCHIVE...
//
// GET /healthz answers 200 once every archive's tags are served; writes are refused from then on.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type mirror struct {
	ready    atomic.Bool
	registry http.Handler
}

func (m *mirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		if !m.ready.Load() {
			http.Error(w, "loading archives", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
		return
	}
	if m.ready.Load() && r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "read-only mirror", http.StatusMethodNotAllowed)
		return
	}
	m.registry.ServeHTTP(w, r)
}

// load pushes every tag of one archive to the mirror at host, under the same repository and tag.
func load(host, archive string) (int, error) {
	opener := func() (io.ReadCloser, error) { return os.Open(archive) }
	manifest, err := tarball.LoadManifest(opener)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", archive, err)
	}
	n := 0
	for _, desc := range manifest {
		for _, tag := range desc.RepoTags {
			src, err := name.NewTag(tag)
			if err != nil {
				return n, fmt.Errorf("%s: tag %q: %w", archive, tag, err)
			}
			img, err := tarball.Image(opener, &src)
			if err != nil {
				return n, fmt.Errorf("%s: %w", archive, err)
			}
			dst, err := name.NewTag(fmt.Sprintf("%s/%s:%s", host, src.RepositoryStr(), src.TagStr()), name.Insecure)
			if err != nil {
				return n, err
			}
			if err := remote.Write(dst, img); err != nil {
				return n, fmt.Errorf("%s: serving %s: %w", archive, tag, err)
			}
			log.Printf("serving %s as %s", tag, src.RepositoryStr()+":"+src.TagStr())
			n++
		}
	}
	return n, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:5000", "loopback address to listen on")
	flag.Parse()
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	m := &mirror{registry: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go func() { log.Fatal(srv.Serve(listener)) }()
	total := 0
	for _, archive := range flag.Args() {
		n, err := load(listener.Addr().String(), archive)
		if err != nil {
			log.Fatal(err)
		}
		total += n
	}
	m.ready.Store(true)
	log.Printf("ready: %d image(s) from %d archive(s) on %s", total, len(flag.Args()), listener.Addr())
	select {}
}
