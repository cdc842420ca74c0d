package redisbench

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// kvConn is one client connection of the load generator: one request at a
// time (get, set), or a pipelined burst of sets for preloading.
type kvConn interface {
	get(key []byte) (found bool, err error)
	set(key, value []byte) error
	setMany(keys [][]byte, value []byte) error
	Close() error
}

const dialTimeout = 10 * time.Second

func dialTCP(addr string) (net.Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, dialTimeout)
	if err != nil {
		return nil, err
	}
	_ = nc.(*net.TCPConn).SetNoDelay(true)
	return nc, nil
}

// respConn speaks the few RESP commands the benchmark needs.
type respConn struct {
	nc  net.Conn
	br  *bufio.Reader
	out []byte
}

func dialRedis(addr string) (*respConn, error) {
	nc, err := dialTCP(addr)
	if err != nil {
		return nil, err
	}
	return &respConn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), out: make([]byte, 0, 8<<10)}, nil
}

func (c *respConn) Close() error { return c.nc.Close() }

func appendBulk(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendSet(b, key, value []byte) []byte {
	b = append(b, "*3\r\n$3\r\nSET\r\n"...)
	return appendBulk(appendBulk(b, key), value)
}

func (c *respConn) set(key, value []byte) error {
	c.out = appendSet(c.out[:0], key, value)
	if _, err := c.nc.Write(c.out); err != nil {
		return err
	}
	return c.readOK()
}

func (c *respConn) setMany(keys [][]byte, value []byte) error {
	c.out = c.out[:0]
	for _, k := range keys {
		c.out = appendSet(c.out, k, value)
	}
	if _, err := c.nc.Write(c.out); err != nil {
		return err
	}
	for range keys {
		if err := c.readOK(); err != nil {
			return err
		}
	}
	return nil
}

func (c *respConn) readOK() error {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 || line[0] != '+' {
		return fmt.Errorf("redis answered %q", line)
	}
	return nil
}

func (c *respConn) get(key []byte) (bool, error) {
	c.out = append(c.out[:0], "*2\r\n$3\r\nGET\r\n"...)
	c.out = appendBulk(c.out, key)
	if _, err := c.nc.Write(c.out); err != nil {
		return false, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return false, err
	}
	if len(line) < 4 || line[0] != '$' {
		return false, fmt.Errorf("redis answered %q", line)
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil || n < 0 {
		return false, err
	}
	_, err = c.br.Discard(n + 2)
	return true, err
}

// info returns one field of INFO's answer.
func (c *respConn) info(section, field string) (string, error) {
	c.out = append(c.out[:0], "*2\r\n$4\r\nINFO\r\n"...)
	c.out = appendBulk(c.out, []byte(section))
	if _, err := c.nc.Write(c.out); err != nil {
		return "", err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil {
		return "", fmt.Errorf("INFO answered %q", line)
	}
	body := make([]byte, n+2)
	if _, err := readFull(c.br, body); err != nil {
		return "", err
	}
	for _, l := range splitLines(string(body)) {
		if len(l) > len(field) && l[:len(field)] == field && l[len(field)] == ':' {
			return l[len(field)+1:], nil
		}
	}
	return "", fmt.Errorf("INFO %s has no %s", section, field)
}

func readFull(br *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		line := s[:i]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		out = append(out, line)
		if i == len(s) {
			break
		}
		s = s[i+1:]
	}
	return out
}

// felixConn speaks CACHE_GET and CACHE_PUT with the wire codec.
type felixConn struct {
	nc         net.Conn
	ref        wire.CacheRef
	r          wire.Reader
	in         []byte
	start, end int
	out        []byte
	id         uint64
}

func dialFelix(addr string, ref wire.CacheRef) (*felixConn, error) {
	nc, err := dialTCP(addr)
	if err != nil {
		return nil, err
	}
	c := &felixConn{nc: nc, ref: ref, in: make([]byte, 64<<10), out: make([]byte, 0, 8<<10)}
	c.out = wire.AppendHello(c.out[:0], c.next(), wire.Hello{VersionMin: 1, VersionMax: 1, Features: wire.FeatureCache,
		ClientName: []byte("redisbench")})
	if _, err := nc.Write(c.out); err != nil {
		nc.Close()
		return nil, err
	}
	f, err := c.read()
	if err == nil && f.Type != wire.TypeHelloOK {
		err = answerErr(f)
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func (c *felixConn) Close() error { return c.nc.Close() }

func (c *felixConn) next() uint64 {
	c.id++
	return c.id
}

// read returns the next frame; it aliases the read buffer until the next
// read.
func (c *felixConn) read() (wire.Frame, error) {
	for {
		f, need, err := c.r.Next(c.in[c.start:c.end])
		if err != nil {
			return f, err
		}
		if need == 0 {
			c.start += f.Size()
			return f, nil
		}
		if c.start > 0 {
			c.end = copy(c.in, c.in[c.start:c.end])
			c.start = 0
		}
		if c.end+need > len(c.in) {
			c.in = append(c.in[:c.end], make([]byte, need)...)
			c.in = c.in[:cap(c.in)]
		}
		n, err := c.nc.Read(c.in[c.end:])
		c.end += n
		if err != nil {
			return wire.Frame{}, err
		}
	}
}

func answerErr(f wire.Frame) error {
	if f.Type == wire.TypeError {
		var e wire.Error
		if err := e.Decode(f, wire.Limits{}); err != nil {
			return err
		}
		return &e
	}
	return fmt.Errorf("felix answered %v", f.Type)
}

func (c *felixConn) set(key, value []byte) error {
	c.out = wire.AppendCachePut(c.out[:0], c.next(), wire.CachePut{Cache: c.ref, Key: key, Value: value})
	if _, err := c.nc.Write(c.out); err != nil {
		return err
	}
	return c.readWritten()
}

func (c *felixConn) readWritten() error {
	f, err := c.read()
	if err != nil {
		return err
	}
	if f.Type != wire.TypeCacheWritten {
		return answerErr(f)
	}
	return nil
}

func (c *felixConn) setMany(keys [][]byte, value []byte) error {
	c.out = c.out[:0]
	for _, k := range keys {
		c.out = wire.AppendCachePut(c.out, c.next(), wire.CachePut{Cache: c.ref, Key: k, Value: value})
	}
	if _, err := c.nc.Write(c.out); err != nil {
		return err
	}
	for range keys {
		if err := c.readWritten(); err != nil {
			return err
		}
	}
	return nil
}

var errNotFound = errors.New("redisbench: a key the preload wrote was not found")

func (c *felixConn) get(key []byte) (bool, error) {
	c.out = wire.AppendCacheGet(c.out[:0], c.next(), wire.CacheGet{Cache: c.ref, Key: key})
	if _, err := c.nc.Write(c.out); err != nil {
		return false, err
	}
	f, err := c.read()
	if err != nil {
		return false, err
	}
	if f.Type != wire.TypeCacheValue {
		return false, answerErr(f)
	}
	return len(f.Body) > 0 && f.Body[0] == 1, nil
}
