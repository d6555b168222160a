package vkremote_test

import (
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/kri-kit/testkit/examples/vkremote"
)

// memListener is a net.Listener whose connections are in-memory pipes
// (net.Pipe) that DialContext makes: HTTP between a client and a server of
// the same test without a socket. A goroutine blocked on a pipe waits on a
// channel, which testing/synctest counts as durably blocked, so that the
// service, its HTTP server and the provider's client can all run in a
// bubble (vk.Config.VirtualTime); a goroutine blocked on a real socket is
// not, and would keep the bubble's clock from moving.
type memListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

// DialContext connects to the listener, whatever the address.
func (l *memListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "remote.invalid:80" }

// serveInMemory serves svc over an in-memory listener until ctx is done,
// and returns a client of it. Once ctx is done the server and every
// connection are closed, and their goroutines end.
func serveInMemory(ctx context.Context, svc http.Handler) *vkremote.Client {
	l := newMemListener()
	srv := &http.Server{Handler: svc}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	tr := &http.Transport{DialContext: l.DialContext}
	context.AfterFunc(ctx, func() {
		_ = srv.Close()
		tr.CloseIdleConnections()
		<-served
	})
	return &vkremote.Client{BaseURL: "http://remote.invalid", HTTP: &http.Client{Transport: tr}}
}
