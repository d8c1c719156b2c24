//go:build linux

package capture

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// A tp_btf program reads its tracepoint's arguments by position, and the
// verifier lets it read any argument as a number or follow it as a
// pointer whatever its type. Where a tracepoint's argument list changed
// between kernels, a program written for one list would read another
// kernel's arguments as something else and record it as fact (before
// 6.13, io_uring_complete's third argument is the request's user_data,
// chosen by the workload, not a kernel pointer). So each such program
// states the lists it can read, and a kernel with another list has the
// probe reported missing instead.

// argsCheck inspects the prototype of p's tracepoint on this kernel, and
// says why the program cannot read it, if it cannot.
type argsCheck func(fp *btf.FuncProto) error

// checkCompleteArgs requires io_uring_complete to pass the request, whose
// own copy of the completion (req->cqe, since 5.19) the program reads.
// After __data, the tracepoint has had these arguments:
//
//	6.13 on:     (ctx, void *req, struct io_uring_cqe *cqe)
//	5.19–6.12:   (ctx, void *req, u64 user_data, int res, unsigned cflags, u64 extra1, u64 extra2)
//	5.17–5.18:   (ctx, void *req, u64 user_data, int res, unsigned cflags): no req->cqe yet
//	before 5.17: (ctx, u64 user_data, long or int res[, unsigned cflags]): no request, so no opcode
func checkCompleteArgs(fp *btf.FuncProto) error {
	p := fp.Params
	switch {
	case len(p) == 4 && isPointer(p[2].Type) && pointsToStruct(p[3].Type, "io_uring_cqe"):
		return nil
	case len(p) == 8 && isPointer(p[2].Type) && isInt(p[3].Type, 8) && isInt(p[4].Type, 4):
		return nil
	case len(p) == 6 && isPointer(p[2].Type):
		return fmt.Errorf("this kernel's io_uring_complete has arguments %s, from before 5.19, whose requests keep no completion of their own", describeParams(p))
	case len(p) >= 3 && !isPointer(p[2].Type):
		return fmt.Errorf("this kernel's io_uring_complete passes no request (arguments %s), so a completion's operation cannot be known", describeParams(p))
	}
	return fmt.Errorf("this kernel's io_uring_complete has arguments %s, which the program cannot read", describeParams(p))
}

// checkSubmitArgs requires io_uring_submit_req's only argument to be the
// request.
func checkSubmitArgs(fp *btf.FuncProto) error {
	if len(fp.Params) == 2 && pointsToStruct(fp.Params[1].Type, "io_kiocb") {
		return nil
	}
	return fmt.Errorf("this kernel's io_uring_submit_req has arguments %s, not (struct io_kiocb *req)", describeParams(fp.Params))
}

// checkReqFailedArgs requires io_uring_req_failed's second argument to be
// the request: (const struct io_uring_sqe *sqe, struct io_kiocb *req,
// int error).
func checkReqFailedArgs(fp *btf.FuncProto) error {
	if len(fp.Params) >= 3 && pointsToStruct(fp.Params[2].Type, "io_kiocb") {
		return nil
	}
	return fmt.Errorf("this kernel's io_uring_req_failed has arguments %s, not (sqe, struct io_kiocb *req, ...)", describeParams(fp.Params))
}

func isPointer(t btf.Type) bool {
	_, ok := btf.UnderlyingType(t).(*btf.Pointer)
	return ok
}

func pointsToStruct(t btf.Type, name string) bool {
	ptr, ok := btf.UnderlyingType(t).(*btf.Pointer)
	if !ok {
		return false
	}
	switch s := btf.UnderlyingType(ptr.Target).(type) {
	case *btf.Struct:
		return s.Name == name
	case *btf.Fwd:
		return s.Name == name
	}
	return false
}

func isInt(t btf.Type, size uint32) bool {
	i, ok := btf.UnderlyingType(t).(*btf.Int)
	return ok && i.Size == size
}

// describeParams names the tracepoint's own arguments (after __data) by
// type, e.g. "(void *, u64, int, unsigned int)".
func describeParams(p []btf.FuncParam) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, fp := range p {
		if i == 0 {
			continue
		}
		if i > 1 {
			b.WriteString(", ")
		}
		b.WriteString(typeName(fp.Type))
	}
	b.WriteByte(')')
	return b.String()
}

func typeName(t btf.Type) string {
	switch v := t.(type) {
	case *btf.Pointer:
		return typeName(v.Target) + " *"
	case *btf.Const:
		return "const " + typeName(v.Type)
	case *btf.Volatile:
		return typeName(v.Type)
	case *btf.Void:
		return "void"
	case *btf.Struct:
		return "struct " + v.Name
	case *btf.Fwd:
		return "struct " + v.Name
	}
	if t.TypeName() != "" {
		return t.TypeName()
	}
	return fmt.Sprintf("%T", t)
}
