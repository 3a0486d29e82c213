#!/usr/bin/env python3
"""Compiles a small Python subset into hologram JSON kernels (SPEC §5).

The output has the shape the prototype's Python-to-JSON compiler emits (version "1.0"), and
uses the "1.1" extensions only where a kernel needs them (while, break, continue, barriers,
shared arrays, atomics as statements, unary operators, //, **, bit operators, and/or,
conditional expressions, casts). Every function with annotated parameters is a kernel; with
more than one kernel the output is an array of schemas, in source order.

    def saxpy(x: DeviceArray[f32], y: DeviceArray[f32], alpha: f32, n: u32):
        i = get_global_id()
        if i < n:
            y[i] = alpha * x[i] + y[i]

Installed as `hologram-py2json`; `hologram-py2json KERNEL.py -o KERNEL.json` (standard output
without -o, standard input for '-'). Errors name the file, line and column, exit with 1 and
leave no output file behind.
"""

import argparse
import ast
import json
import os
import sys
import tempfile

SCALARS = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32", "f64", "bool", "usize"}
BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Mod: "mod",
          ast.FloorDiv: "floor_div", ast.Pow: "pow", ast.LShift: "shl", ast.RShift: "shr",
          ast.BitAnd: "bit_and", ast.BitOr: "bit_or", ast.BitXor: "bit_xor"}
V10_BINOPS = {"add", "sub", "mul", "div", "mod"}
CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}


class CompileError(Exception):
    def __init__(self, node, msg):
        line = getattr(node, "lineno", None)
        col = getattr(node, "col_offset", None)
        self.loc = "" if line is None else f"{line}:{col + 1}" if col is not None else f"{line}"
        self.msg = msg
        super().__init__(f"{self.loc}: {msg}" if self.loc else msg)


class KernelCompiler:
    def __init__(self, fn):
        self.fn = fn
        self.declared = set()
        self.v11 = False

    def param(self, arg):
        ann = arg.annotation
        if ann is None:
            raise CompileError(arg, f"parameter '{arg.arg}' needs a type annotation")
        if isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) and ann.value.id == "DeviceArray":
            elem = ann.slice.id if isinstance(ann.slice, ast.Name) else None
            if elem not in SCALARS:
                raise CompileError(arg, "DeviceArray needs a scalar element type")
            return {"name": arg.arg, "type": {"kind": "device_array",
                                               "element_type": {"kind": "scalar", "type": elem}}}
        if isinstance(ann, ast.Name) and ann.id in SCALARS | {"int", "float"}:
            t = {"int": "i32", "float": "f32"}.get(ann.id, ann.id)
            return {"name": arg.arg, "type": {"kind": "scalar", "type": t}}
        raise CompileError(arg, f"unsupported annotation for '{arg.arg}'")

    def compile(self):
        params = [self.param(a) for a in self.fn.args.args]
        self.declared = {a.arg for a in self.fn.args.args}
        body = self.body(self.fn.body)
        return {"version": "1.1" if self.v11 else "1.0",
                "kernel": {"name": self.fn.name, "params": params, "body": body}}

    def body(self, stmts):
        out = []
        for s in stmts:
            r = self.stmt(s)
            if r is not None:
                out.extend(r if isinstance(r, list) else [r])
        return out

    def stmt(self, s):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return None  # docstring
        if isinstance(s, ast.Pass):
            return None
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                raise CompileError(s, "one assignment target at a time")
            t = s.targets[0]
            call = s.value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "shared":
                self.v11 = True
                elem, length = call.args
                self.declared.add(t.id)
                return {"type": "shared", "name": t.id, "element_type": elem.id, "length": length.value}
            return self.assign(t, self.expr(s.value))
        if isinstance(s, ast.AugAssign):
            op = BINOPS[type(s.op)]
            self.need(op in V10_BINOPS)
            value = {"type": "binary_op", "op": op, "left": self.expr(s.target), "right": self.expr(s.value)}
            return self.assign(s.target, value)
        if isinstance(s, ast.If):
            return {"type": "if", "condition": self.expr(s.test), "then_body": self.body(s.body),
                    "else_body": self.body(s.orelse) if s.orelse else None}
        if isinstance(s, ast.For):
            it = s.iter
            if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
                raise CompileError(s, "for loops iterate over range(...)")
            args = [self.expr(a) for a in it.args]
            zero, one = {"type": "literal", "value": 0}, {"type": "literal", "value": 1}
            start, stop, step = (zero, args[0], one) if len(args) == 1 else \
                (args[0], args[1], one) if len(args) == 2 else args
            self.declared.add(s.target.id)
            return {"type": "for", "var": s.target.id, "start": start, "stop": stop, "step": step,
                    "body": self.body(s.body)}
        if isinstance(s, ast.While):
            self.v11 = True
            return {"type": "while", "condition": self.expr(s.test), "body": self.body(s.body)}
        if isinstance(s, (ast.Break, ast.Continue)):
            self.v11 = True
            return {"type": "break" if isinstance(s, ast.Break) else "continue"}
        if isinstance(s, ast.Return):
            return {"type": "return", "value": None}
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func.id if isinstance(s.value.func, ast.Name) else None
            self.v11 = True
            if f == "barrier":
                return {"type": "barrier"}
            if f == "library":
                return self.library(s.value)
            return {"type": "expr", "value": self.expr(s.value)}
        raise CompileError(s, f"unsupported statement {type(s).__name__}")

    def library(self, call):
        op = call.args[0].value
        args, result = {}, None
        for kw in call.keywords:
            if kw.arg == "result":
                result = kw.value.id
            elif isinstance(kw.value, ast.Name) and kw.value.id not in ("True", "False"):
                args[kw.arg] = kw.value.id
            else:
                args[kw.arg] = self.expr(kw.value)
        stmt = {"type": "library", "op": op, "args": args}
        if result:
            stmt["result"] = result
            self.declared.add(result)
        return stmt

    def assign(self, target, value):
        if isinstance(target, ast.Name):
            if target.id not in self.declared:
                self.declared.add(target.id)
                return {"type": "let", "name": target.id, "value": value}
            return {"type": "assign", "target": {"type": "var", "name": target.id}, "value": value}
        return {"type": "assign", "target": self.expr(target), "value": value}

    def need(self, cond):
        if not cond:
            self.v11 = True

    def expr(self, e):
        if isinstance(e, ast.Name):
            if e.id in ("True", "False"):
                return {"type": "literal", "value": e.id == "True"}
            return {"type": "var", "name": e.id}
        if isinstance(e, ast.Constant):
            if isinstance(e.value, bool) or isinstance(e.value, (int, float)):
                return {"type": "literal", "value": e.value}
            raise CompileError(e, "only numeric and boolean literals")
        if isinstance(e, ast.BinOp):
            op = BINOPS[type(e.op)]
            self.need(op in V10_BINOPS)
            return {"type": "binary_op", "op": op, "left": self.expr(e.left), "right": self.expr(e.right)}
        if isinstance(e, ast.Compare):
            if len(e.ops) != 1:
                raise CompileError(e, "one comparison at a time")
            return {"type": "binary_op", "op": CMPOPS[type(e.ops[0])], "left": self.expr(e.left),
                    "right": self.expr(e.comparators[0])}
        if isinstance(e, ast.BoolOp):
            self.v11 = True
            op = "and" if isinstance(e.op, ast.And) else "or"
            out = self.expr(e.values[0])
            for v in e.values[1:]:
                out = {"type": "binary_op", "op": op, "left": out, "right": self.expr(v)}
            return out
        if isinstance(e, ast.UnaryOp):
            if isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
                return {"type": "literal", "value": -e.operand.value}
            self.v11 = True
            op = {ast.USub: "neg", ast.Not: "not", ast.Invert: "bit_not"}[type(e.op)]
            return {"type": "unary_op", "op": op, "operand": self.expr(e.operand)}
        if isinstance(e, ast.Subscript):
            return {"type": "index", "array": self.expr(e.value), "index": self.expr(e.slice)}
        if isinstance(e, ast.IfExp):
            self.v11 = True
            return {"type": "select", "condition": self.expr(e.test), "if_true": self.expr(e.body),
                    "if_false": self.expr(e.orelse)}
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
            if e.func.id.startswith("atomic_"):
                self.v11 = True
            return {"type": "call", "function": e.func.id, "args": [self.expr(a) for a in e.args]}
        raise CompileError(e, f"unsupported expression {type(e).__name__}")


def compile_source(text):
    tree = ast.parse(text)
    kernels = [KernelCompiler(f).compile() for f in tree.body
               if isinstance(f, ast.FunctionDef) and f.args.args and all(a.annotation for a in f.args.args)]
    if not kernels:
        raise CompileError(tree, "no kernel functions found")
    return kernels[0] if len(kernels) == 1 else kernels


def write_atomically(path, text):
    """Writes text to path through a temporary file beside it, so a failure leaves no half file."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".py2json-", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv):
    parser = argparse.ArgumentParser(
        prog="hologram-py2json",
        description="Compiles a small Python subset into hologram JSON kernels (SPEC §5).")
    parser.add_argument("input", help="the Python file ('-' reads standard input)")
    parser.add_argument("-o", dest="output", help="output file (default: standard output)")
    args = parser.parse_args(argv[1:])
    name = "<stdin>" if args.input == "-" else args.input
    # An output that is the input (the same path, or a link to it) would replace the program.
    if args.input != "-" and args.output and args.output != "-":
        try:
            same = os.path.samefile(args.input, args.output)
        except OSError:
            same = False
        if same:
            parser.error(f"the output '{args.output}' is the input '{args.input}'; "
                         "writing it would replace the program")
    try:
        if args.input == "-":
            source = sys.stdin.read()
        else:
            with open(args.input, encoding="utf-8") as f:
                source = f.read()
    except (OSError, UnicodeDecodeError) as e:
        print(f"hologram-py2json: error: cannot read {name}: {e}", file=sys.stderr)
        return 1
    try:
        doc = compile_source(source)
    except SyntaxError as e:
        print(f"{name}:{e.lineno}:{e.offset}: error: {e.msg}", file=sys.stderr)
        return 1
    except CompileError as e:
        print(f"{name}:{e.loc + ':' if e.loc else ''} error: {e.msg}", file=sys.stderr)
        return 1
    text = json.dumps(doc, indent=1) + "\n"
    if args.output and args.output != "-":
        try:
            write_atomically(args.output, text)
        except OSError as e:
            print(f"hologram-py2json: error: cannot write {args.output}: {e}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
