// Command jsonnetd serves a directory of Jsonnet files as webhooks, the way the server in
// upstream Metacontroller's metacontroller/jsonnetd image does for its examples: a POST to
// /NAME evaluates NAME.jsonnet, which must be a function of one argument, with the request body
// (JSON, read as Jsonnet code) as its top-level argument `request`; the result is the response
// body. Evaluation errors are answered with 500 and the error text, unknown hooks with 404.
//
//	jsonnetd [-addr :8080] [-dir .]
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/google/go-jsonnet"
)

// A hook name is one path segment: no directories, no hidden files.
var hookName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

const maxBodyBytes = 32 << 20

type server struct {
	dir string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	status, body := s.handle(r)
	w.Header().Set("Content-Type", "application/json")
	if status != http.StatusOK {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
	log.Printf("%s %s %d %s", r.Method, r.URL.Path, status, time.Since(start).Round(time.Microsecond))
}

func (s *server) handle(r *http.Request) (int, string) {
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, "hooks are called with POST\n"
	}
	name := r.URL.Path[1:]
	if !hookName.MatchString(name) {
		return http.StatusNotFound, fmt.Sprintf("no hook %q\n", r.URL.Path)
	}
	file := filepath.Join(s.dir, name+".jsonnet")
	if _, err := os.Stat(file); err != nil {
		return http.StatusNotFound, fmt.Sprintf("no hook %q: %s is missing\n", r.URL.Path, file)
	}
	request, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		return http.StatusBadRequest, fmt.Sprintf("cannot read the request: %v\n", err)
	}
	vm := jsonnet.MakeVM()
	vm.Importer(&jsonnet.FileImporter{JPaths: []string{s.dir}})
	vm.TLACode("request", string(request))
	out, err := vm.EvaluateFile(file)
	if err != nil {
		return http.StatusInternalServerError, err.Error() + "\n"
	}
	return http.StatusOK, out
}

func main() {
	// ":8080" is the port of upstream's image inside a Pod; on a host, pass a loopback address.
	addr := flag.String("addr", ":8080", "address to listen on")
	dir := flag.String("dir", ".", "directory holding the NAME.jsonnet hooks")
	flag.Parse()
	abs, err := filepath.Abs(*dir)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Addr:              *addr,
		Handler:           &server{dir: abs},
		ReadHeaderTimeout: 10 * time.Second,
	}
	log.Printf("jsonnetd serving %s on %s", abs, *addr)
	log.Fatal(srv.ListenAndServe())
}
