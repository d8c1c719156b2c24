package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"vigil/internal/evidence"
)

func checkGlob(g string) error {
	if !doublestar.ValidatePattern(g) {
		return errors.New("not a valid glob")
	}
	if !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "*") {
		return errors.New("must be absolute (start with / or a wildcard)")
	}
	return nil
}

func matchPath(globs []string, p string) bool {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, p); ok {
			return true
		}
	}
	return false
}

// endpointPattern is one compiled endpoint of a rule.
type endpointPattern struct {
	unixGlob string       // set for unix:GLOB
	anyAddr  bool         // "*"
	prefix   netip.Prefix // otherwise
	portLo   uint16
	portHi   uint16
}

// parseEndpoint reads ADDR_OR_CIDR:PORT, [IPV6_OR_CIDR]:PORT, *:PORT or
// unix:GLOB; PORT is a number, N-M or *.
func parseEndpoint(s string) (endpointPattern, error) {
	if g, ok := strings.CutPrefix(s, "unix:"); ok {
		if !doublestar.ValidatePattern(g) {
			return endpointPattern{}, errors.New("not a valid glob after unix:")
		}
		return endpointPattern{unixGlob: g}, nil
	}
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return endpointPattern{}, errors.New("want ADDR:PORT (PORT may be * or N-M), [IPv6]:PORT or unix:GLOB")
	}
	host, port := s[:i], s[i+1:]
	var e endpointPattern
	switch {
	case port == "*":
		e.portLo, e.portHi = 0, 65535
	default:
		lo, hi, isRange := strings.Cut(port, "-")
		a, err1 := strconv.ParseUint(lo, 10, 16)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.ParseUint(hi, 10, 16)
		}
		if err1 != nil || err2 != nil || b < a {
			return endpointPattern{}, fmt.Errorf("port %q: want a number 0-65535, N-M or *", port)
		}
		e.portLo, e.portHi = uint16(a), uint16(b)
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	} else if strings.Contains(host, ":") {
		return endpointPattern{}, errors.New("an IPv6 address goes in brackets: [ADDR]:PORT")
	}
	switch {
	case host == "*":
		e.anyAddr = true
	case strings.Contains(host, "/"):
		p, err := netip.ParsePrefix(host)
		if err != nil {
			return endpointPattern{}, fmt.Errorf("address %q: %v", host, err)
		}
		e.prefix = p.Masked()
	default:
		a, err := netip.ParseAddr(host)
		if err != nil {
			return endpointPattern{}, fmt.Errorf("address %q: not an IP address or CIDR", host)
		}
		e.prefix = netip.PrefixFrom(a, a.BitLen())
	}
	return e, nil
}

func (e endpointPattern) match(ep evidence.Endpoint) bool {
	if e.unixGlob != "" || ep.Family == "unix" {
		if e.unixGlob == "" || ep.Family != "unix" {
			return false
		}
		ok, _ := doublestar.Match(e.unixGlob, string(ep.Addr))
		return ok
	}
	if ep.Port < e.portLo || ep.Port > e.portHi {
		return false
	}
	if e.anyAddr {
		return ep.Family == "inet" || ep.Family == "inet6"
	}
	a, err := netip.ParseAddr(string(ep.Addr))
	if err != nil {
		return false
	}
	// An IPv4 address reached through an IPv6 socket (::ffff:a.b.c.d)
	// is that IPv4 address.
	if e.prefix.Addr().Is4() {
		a = a.Unmap()
	}
	return e.prefix.Contains(a)
}

func matchEndpoint(ps []endpointPattern, ep evidence.Endpoint) bool {
	for _, p := range ps {
		if p.match(ep) {
			return true
		}
	}
	return false
}
