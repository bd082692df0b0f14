package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// allowList is the webhooks.allow setting: host names, and addresses or
// ranges, a webhook may reach although they are not public.
type allowList struct {
	hosts    map[string]bool
	prefixes []netip.Prefix
}

func parseAllow(entries []string) (allowList, error) {
	a := allowList{hosts: map[string]bool{}}
	for _, e := range entries {
		switch {
		case strings.Contains(e, "/"):
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return a, fmt.Errorf("webhooks.allow: %q is not a CIDR range: %w", e, err)
			}
			a.prefixes = append(a.prefixes, p.Masked())
		default:
			if ip, err := netip.ParseAddr(e); err == nil {
				a.prefixes = append(a.prefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
				continue
			}
			a.hosts[strings.ToLower(e)] = true
		}
	}
	return a, nil
}

// addrAllowed reports whether ip may be reached: a public address, or one
// the allow-list names.
func (a allowList) addrAllowed(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return public(ip)
}

// sharedSpace is 100.64.0.0/10, carrier-grade NAT: not reachable from the
// internet either.
var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")

// public reports whether ip is a public unicast address.
func public(ip netip.Addr) bool {
	return ip.IsValid() && ip.IsGlobalUnicast() && !ip.IsPrivate() && !sharedSpace.Contains(ip)
}

// ErrRefused is a webhook URL whose host is not allowed.
var ErrRefused = errors.New("refused")

// checkURL checks that raw is an http or https URL whose host resolves
// only to allowed addresses, using lookup.
func (a allowList) checkURL(ctx context.Context, raw string, lookup lookupFunc) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("webhook %q is not a URL: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("webhook %q must be an http or https URL", raw)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("webhook %q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("webhook %q must not carry a user name or password", raw)
	}
	if a.hosts[strings.ToLower(host)] {
		return nil
	}
	addrs, err := resolve(ctx, host, lookup)
	if err != nil {
		return fmt.Errorf("webhook host %s cannot be resolved: %w", host, err)
	}
	for _, ip := range addrs {
		if !a.addrAllowed(ip) {
			return fmt.Errorf("webhook host %s is %s, a loopback, link-local or private address: %w (list it in webhooks.allow in dawn.yaml to allow it)", host, ip, ErrRefused)
		}
	}
	return nil
}

// lookupFunc resolves a host name to its addresses.
type lookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

func systemLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func resolve(ctx context.Context, host string, lookup lookupFunc) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	addrs, err := lookup(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no addresses")
	}
	return addrs, err
}

// dialer dials a webhook's host: it resolves the host itself and, unless
// the allow-list names the host, refuses at the socket (the dialer's
// Control) any address that is not allowed, so that a DNS answer changed
// since the request was checked cannot reach one.
type dialer struct {
	allow  allowList
	lookup lookupFunc
	net    net.Dialer
}

func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	nd := d.net
	if !d.allow.hosts[strings.ToLower(host)] {
		nd.Control = d.control
	}
	addrs, err := resolve(ctx, host, d.lookup)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range addrs {
		conn, err := nd.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// control refuses to connect to an address the allow-list does not let
// through.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return err
	}
	if !d.allow.addrAllowed(ap.Addr()) {
		return fmt.Errorf("webhook dial to %s: %w: a loopback, link-local or private address not in webhooks.allow", ap.Addr(), ErrRefused)
	}
	return nil
}
