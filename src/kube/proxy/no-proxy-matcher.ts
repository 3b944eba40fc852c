/**
 * `NO_PROXY` as Go's `net/http` reads it (golang.org/x/net/http/httpproxy), which is what
 * client-go and upstream Metacontroller's hook client use.
 *
 * @remarks
 * **Semantics (Go's, entry by entry, comma separated, case-insensitive)**
 * - `*` anywhere: no request is proxied.
 * - `10.0.0.0/8`, `fd00::/8`: a CIDR, matched against request hosts that are IP literals.
 * - `10.1.2.3`, `10.1.2.3:8080`, `[::1]:443`: an address, optionally with a port.
 * - `example.com`: that host and every subdomain; `.example.com` and `*.example.com`: subdomains
 *   only. Either may end in `:port`, and then matches that port only.
 * - Domain entries never match an IP literal, and a CIDR never matches a name (no DNS lookup).
 * - Independently of the list, `localhost` and loopback addresses (127.0.0.0/8, `::1`) are never
 *   proxied: Go hard-codes this exemption, so an environment proxy cannot intercept them.
 *
 * @module
 */
import { BlockList, isIP } from 'node:net'
import { domainToASCII } from 'node:url'

/** Decides whether a request to a host and port skips the environment's proxy. */
export interface NoProxyMatcher {
  /**
   * True when a request to `host` (a name, or an IP literal with or without brackets) on `port`
   * must go direct.
   */
  bypasses(host: string, port: string): boolean
}

interface AddressEntry {
  readonly addresses: BlockList
  readonly port: string
}

interface DomainEntry {
  /** The suffix, always with its leading dot. */
  readonly suffix: string
  /** The entry had no leading dot or `*.`, so the bare name matches too. */
  readonly matchesBareHost: boolean
  readonly port: string
}

const LOOPBACK = new BlockList()
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK.addAddress('::1', 'ipv6')

/** An IP literal's family as `BlockList` names it, or undefined for a name. */
function familyOf(host: string): 'ipv4' | 'ipv6' | undefined {
  const version = isIP(host)
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : undefined
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
}

/** `host:port` split as Go's `net.SplitHostPort`, or undefined when the entry has no port. */
function splitHostPort(entry: string): { host: string; port: string } | undefined {
  const bracketed = /^\[([^\]]*)\]:([^:]*)$/.exec(entry)
  if (bracketed !== null) return { host: bracketed[1] ?? '', port: bracketed[2] ?? '' }
  const colon = entry.lastIndexOf(':')
  // More than one colon without brackets is an IPv6 literal with no port, as Go decides.
  if (colon < 0 || entry.indexOf(':') !== colon) return undefined
  return { host: entry.slice(0, colon), port: entry.slice(colon + 1) }
}

/** Adds a CIDR entry to `into`; false when `entry` is not a CIDR. */
function addCidr(entry: string, into: BlockList): boolean {
  const slash = entry.indexOf('/')
  if (slash < 0) return false
  const address = entry.slice(0, slash)
  const bitsText = entry.slice(slash + 1)
  const family = familyOf(address)
  const bits = Number(bitsText)
  const max = family === 'ipv4' ? 32 : 128
  if (family === undefined || !/^\d+$/.test(bitsText) || bits > max) return false
  into.addSubnet(address, bits, family)
  return true
}

/** Parses a `NO_PROXY` value with Go's rules (see the module notes). */
export function parseNoProxy(value: string): NoProxyMatcher {
  const cidrs = new BlockList()
  let hasCidr = false
  const addresses: AddressEntry[] = []
  const domains: DomainEntry[] = []
  for (const raw of value.split(',')) {
    const entry = raw.trim().toLowerCase()
    if (entry === '') continue
    if (entry === '*') return { bypasses: () => true }
    if (addCidr(entry, cidrs)) {
      hasCidr = true
      continue
    }
    const split = splitHostPort(entry)
    const host = unbracket(split?.host ?? entry)
    const port = split?.port ?? ''
    if (host === '') continue
    const family = familyOf(host)
    if (family !== undefined) {
      const single = new BlockList()
      single.addAddress(host, family)
      addresses.push({ addresses: single, port })
      continue
    }
    const name = host.startsWith('*.') ? host.slice(1) : host
    const dotted = name.startsWith('.') ? name : `.${name}`
    domains.push({
      suffix: domainToASCII(dotted.slice(1)) === '' ? dotted : `.${domainToASCII(dotted.slice(1))}`,
      matchesBareHost: !name.startsWith('.'),
      port,
    })
  }
  return {
    bypasses(rawHost, port) {
      const host = unbracket(rawHost.trim().toLowerCase())
      if (host === 'localhost') return true
      const family = familyOf(host)
      if (family !== undefined) {
        if (LOOPBACK.check(host, family)) return true
        if (hasCidr && cidrs.check(host, family)) return true
        return addresses.some(
          (entry) =>
            entry.addresses.check(host, family) && (entry.port === '' || entry.port === port)
        )
      }
      return domains.some(
        (entry) =>
          (host.endsWith(entry.suffix) ||
            (entry.matchesBareHost && host === entry.suffix.slice(1))) &&
          (entry.port === '' || entry.port === port)
      )
    },
  }
}
