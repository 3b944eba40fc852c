// Command coredns is CoreDNS (github.com/coredns/coredns, pinned in go.mod) linked with only the
// plugins the local cluster's DNS uses, so a cold build compiles client-go once and no cloud
// provider SDK (CoreDNS's default build links route53, azure, clouddns and more).
//
// The plugin set and why each is here is in docs/control-plane.md ("Cluster DNS").
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/template"
)

// directives is the order a query passes the plugins in (CoreDNS's own order for these, except
// template after kubernetes: names the kubernetes plugin's zones do not cover reach template,
// which answers NXDOMAIN, since the cluster has no outside network to forward to).
var directives = []string{
	"ready",
	"health",
	"errors",
	"log",
	"loadbalance",
	"cache",
	"kubernetes",
	"template",
}

func init() {
	dnsserver.Directives = directives
}

func main() {
	coremain.Run()
}
