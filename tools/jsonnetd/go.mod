// Wrapper module of jsonnetd, the Jsonnet webhook server upstream's service-per-pod example runs
// (metacontroller/jsonnetd): our own small server on google/go-jsonnet. See build.sh.
module metacontroller-ts.invalid/jsonnetd

go 1.26.0

godebug default=go1.26

require github.com/google/go-jsonnet v0.22.0

require (
	golang.org/x/crypto v0.45.0 // indirect
	golang.org/x/sys v0.38.0 // indirect
	sigs.k8s.io/yaml v1.4.0 // indirect
)
