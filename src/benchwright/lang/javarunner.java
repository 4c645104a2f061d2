// benchwright's Java test runner (see benchwright/lang/java.py): compiled once, in a package of
// its own, so that no class of a solution (all in the unnamed package) can have its name. Its
// main reads the nonce before the test class (whose static members the prelude may initialise by
// calling the solution) is even loaded: the test class is found by name, by the worker thread
// that runs the first test. Result lines go to the JVM's stdout, each "BWR <nonce> {json}"; the
// nonce and the stream live only in main's locals and in objects reachable from nowhere else (a
// Channel), so no static field of any class holds them and no method a solution can call writes
// them. Arguments: the tests' limits in ms (comma-separated), the output cap a test, the test
// class's name, the count of tests.
package bwrunner;

public final class Runner {
    private static java.lang.String __bwClass = "";  // for the lines of frames only (see Tests)
    private static final java.lang.Object __bwCapLock = new java.lang.Object();
    private static final java.io.ByteArrayOutputStream __bwCaptured = new java.io.ByteArrayOutputStream();
    private static boolean __bwTruncated;
    private static int __bwCap = 4096;
    private static volatile int __bwCurrent = -1;
    private static volatile boolean __bwFinished;
    private static volatile boolean __bwOutOfMemory;
    // how much more resident memory than before its first sample a warm test JVM may hold
    private static final long __BW_RSS_SLACK = 16L * 1024 * 1024;

    static final class __BwTee extends java.io.OutputStream {
        @java.lang.Override public void write(int b) {
            __bwCapture(new byte[] {(byte) b}, 0, 1);
        }
        @java.lang.Override public void write(byte[] b, int off, int len) {
            __bwCapture(b, off, len);
        }
    }

    static void __bwCapture(byte[] b, int off, int len) {
        synchronized (__bwCapLock) {
            int room = __bwCap - __bwCaptured.size();
            if (len > room) { __bwTruncated = true; len = room > 0 ? room : 0; }
            __bwCaptured.write(b, off, len);
        }
    }

    static java.lang.String __bwTakeOutput() {
        synchronized (__bwCapLock) {
            java.lang.String s = new java.lang.String(__bwCaptured.toByteArray(), java.nio.charset.StandardCharsets.UTF_8);
            if (__bwTruncated) s = s + "\n[output truncated]";
            __bwCaptured.reset();
            __bwTruncated = false;
            return s;
        }
    }

    static void __bwFlushAll() {
        try { java.lang.System.out.flush(); java.lang.System.err.flush(); } catch (java.lang.Throwable e) { }
    }

    static void __bwHex(java.lang.StringBuilder sb, char c) {
        java.lang.String h = java.lang.Integer.toHexString(c);
        sb.append("\\u");
        for (int k = h.length(); k < 4; k++) sb.append('0');
        sb.append(h);
    }

    static void __bwJson(java.lang.StringBuilder sb, java.lang.String s) {
        sb.append('"');
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c == '"') sb.append("\\\"");
            else if (c == '\\') sb.append("\\\\");
            else if (c >= 0x20 && c < 0x7f) sb.append(c);
            else if (java.lang.Character.isHighSurrogate(c) && i + 1 < n && java.lang.Character.isLowSurrogate(s.charAt(i + 1))) {
                __bwHex(sb, c);
                __bwHex(sb, s.charAt(++i));
            } else if (java.lang.Character.isSurrogate(c)) __bwHex(sb, (char) 0xfffd);
            else __bwHex(sb, c);
        }
        sb.append('"');
    }

    static java.lang.String __bwCut(java.lang.String s) {
        return s.length() > __MESSAGE_CHARS__ ? s.substring(0, __MESSAGE_CHARS__) + "..." : s;
    }

    static java.lang.String __bwDescribe(java.lang.Throwable t) {
        java.lang.StringBuilder sb = new java.lang.StringBuilder();
        java.lang.Throwable cur = t;
        for (int depth = 0; cur != null && depth < 4; depth++) {
            if (depth > 0) sb.append("; caused by: ");
            java.lang.String text;
            try { text = cur.toString(); } catch (java.lang.Throwable e) { text = cur.getClass().getName(); }
            sb.append(text);
            java.lang.Throwable next = cur.getCause();
            cur = next == cur ? null : next;
        }
        return sb.toString();
    }

    // the result channel: only main and the exit hook hold one
    static final class Channel {
        private final java.io.OutputStream out;
        private final byte[] prefix;
        Channel(java.io.OutputStream out, byte[] prefix) { this.out = out; this.prefix = prefix; }
        synchronized void emit(java.lang.String line) {
            try {
                byte[] body = line.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
                byte[] all = new byte[prefix.length + body.length + 2];
                all[0] = '\n';  // ends whatever a solution wrote to this stream without a newline
                java.lang.System.arraycopy(prefix, 0, all, 1, prefix.length);
                java.lang.System.arraycopy(body, 0, all, 1 + prefix.length, body.length);
                all[all.length - 1] = '\n';
                out.write(all);
                out.flush();
            } catch (java.lang.Throwable e) { }
        }
    }

    // "BWR <nonce> ": the first line on stdin, read before anything else runs (unbuffered: the
    // bytes stay in this array, which is kept only by the Channel)
    static byte[] __bwPrefix() throws java.io.IOException {
        java.io.InputStream in = new java.io.FileInputStream(java.io.FileDescriptor.in);
        byte[] buf = new byte[4 + 64 + 1];
        int n = 0;
        buf[n++] = 'B'; buf[n++] = 'W'; buf[n++] = 'R'; buf[n++] = ' ';
        for (int b; n < buf.length - 1 && (b = in.read()) >= 0 && b != '\n'; ) buf[n++] = (byte) b;
        buf[n++] = ' ';
        return java.util.Arrays.copyOf(buf, n);
    }

    // peak resident memory of this JVM, from /proc/self/status (bytes; -1 when unreadable)
    static long __bwPeakRss() {
        return __bwStatusBytes("\nVmHWM:");
    }

    // a figure of /proc/self/status in bytes ("\nVmRSS:"...); -1 when unreadable
    static long __bwStatusBytes(java.lang.String key) {
        try (java.io.FileInputStream in = new java.io.FileInputStream("/proc/self/status")) {
            byte[] buf = new byte[16384];
            int n = 0;
            for (int r; n < buf.length && (r = in.read(buf, n, buf.length - n)) > 0; ) n += r;
            java.lang.String text = new java.lang.String(buf, 0, n, java.nio.charset.StandardCharsets.US_ASCII);
            int at = text.indexOf(key);
            if (at < 0) return -1;
            long kb = 0;
            boolean digits = false;
            for (int k = at + key.length(); k < n; k++) {
                char c = text.charAt(k);
                if (c >= '0' && c <= '9') { kb = kb * 10 + (c - '0'); digits = true; }
                else if (digits || c == '\n') break;
            }
            return digits ? kb * 1024L : -1;
        } catch (java.lang.Throwable e) {
            return -1;
        }
    }

    // the first number of a /proc file (a thread id, a CPU time in ns); -1 when unreadable
    static long __bwProcNumber(java.lang.String path) {
        try (java.io.FileInputStream in = new java.io.FileInputStream(path)) {
            long v = 0;
            boolean digits = false;
            for (int b; (b = in.read()) >= '0' && b <= '9'; ) { v = v * 10 + (b - '0'); digits = true; }
            return digits ? v : -1;
        } catch (java.lang.Throwable e) {
            return -1;
        }
    }

    // one "usage" line: the worker thread's CPU time (it runs the tests and nothing else, so this
    // is the sum over the tests run) and the JVM's peak RSS. The CPU time is the kernel's own
    // count for that thread (/proc/self/task/<tid>/schedstat, in ns: what ThreadMXBean reads,
    // without the ~35 ms the management classes cost to load); ThreadMXBean only when the
    // kernel does not offer it.
    static void __bwUsage(Channel ch, Tests tests) {
        java.lang.StringBuilder sb = new java.lang.StringBuilder("{\"ev\":\"usage\"");
        long rss = __bwPeakRss();
        if (rss >= 0) sb.append(",\"max_rss_bytes\":").append(rss);
        java.lang.Thread worker = tests.worker;
        long tid = tests.tid;
        long ns = tid > 0 ? __bwProcNumber("/proc/self/task/" + tid + "/schedstat") : -1;
        if (worker == null) {
            sb.append(",\"cpu_ms\":0.0");
        } else if (ns >= 0) {
            sb.append(",\"cpu_ms\":").append(ns / 1e6);
        } else {
            try {
                long cpu = java.lang.management.ManagementFactory.getThreadMXBean().getThreadCpuTime(worker.getId());
                if (cpu >= 0) sb.append(",\"cpu_ms\":").append(cpu / 1e6);
            } catch (java.lang.Throwable e) { }
        }
        ch.emit(sb.append('}').toString());
    }

    static void __bwLines(java.lang.StringBuilder sb, java.lang.StackTraceElement[] trace) {
        sb.append(",\"lines\":[");
        int count = 0;
        if (trace != null) {
            for (java.lang.StackTraceElement e : trace) {
                java.lang.String c = e.getClassName();
                if ((c.equals(__bwClass) || c.startsWith(__bwClass + "$")) && e.getLineNumber() > 0) {
                    if (count++ > 0) sb.append(',');
                    sb.append(e.getLineNumber());
                    if (count >= 64) break;
                }
            }
        }
        sb.append(']');
    }

    static java.lang.String __bwRecord(int i, java.lang.String status, long nanos, java.lang.Throwable t,
                                       java.lang.StackTraceElement[] where, java.lang.String out) {
        java.lang.StringBuilder sb = new java.lang.StringBuilder(256);
        sb.append("{\"i\":").append(i).append(",\"status\":\"").append(status).append('"');
        if (nanos >= 0) sb.append(",\"ms\":").append(nanos / 1e6);
        if (t != null) {
            sb.append(",\"exc\":");
            __bwJson(sb, t.getClass().getName());
            java.lang.String msg;
            try { msg = t.getMessage(); } catch (java.lang.Throwable e) { msg = null; }
            if (msg != null) { sb.append(",\"msg\":"); __bwJson(sb, __bwCut(msg)); }
            sb.append(",\"text\":");
            __bwJson(sb, __bwCut(__bwDescribe(t)));
            java.lang.StackTraceElement[] trace;
            try { trace = t.getStackTrace(); } catch (java.lang.Throwable e) { trace = null; }
            __bwLines(sb, trace);
        } else if (where != null) {
            __bwLines(sb, where);
        }
        if (out != null) { sb.append(",\"out\":"); __bwJson(sb, out); }
        sb.append('}');
        return sb.toString();
    }

    // What main shares with the worker and the exit hook: the test class's name, its __bwRun
    // once found (the class initialised by the first test's thread), the worker thread and its
    // kernel thread id. In no static field: a solution reaches statics by reflection, and one
    // that could point the method at its own would make every later test pass. Only main's
    // locals and objects held by the JDK's own classes (closed to reflection) refer to it.
    static final class Tests {
        private final java.lang.String className;
        private final java.lang.ClassLoader loader;  // null: the class path's (a JVM of one sample)
        private java.lang.reflect.Method method;
        private volatile java.lang.Thread worker;
        private volatile long tid = -1;
        Tests(java.lang.String className, java.lang.ClassLoader loader) { this.className = className; this.loader = loader; }
        java.lang.reflect.Method method() throws java.lang.Throwable {
            if (method == null) {
                java.lang.Class<?> c = loader == null ? java.lang.Class.forName(className)
                    : java.lang.Class.forName(className, true, loader);
                method = c.getMethod("__bwRun", int.class);
            }
            return method;
        }
    }

    // nested classes rather than lambdas: no invokedynamic bootstrap at start-up
    static final class __BwTest implements java.util.concurrent.Callable<java.lang.Object[]> {
        private final int index;
        private final Tests tests;
        __BwTest(int index, Tests tests) { this.index = index; this.tests = tests; }
        @java.lang.Override public java.lang.Object[] call() {
            if (tests.tid < 0) tests.tid = __bwProcNumber("/proc/thread-self/stat");
            long started = java.lang.System.nanoTime();
            try {
                try {
                    tests.method().invoke(null, index);
                } catch (java.lang.reflect.InvocationTargetException e) {
                    throw e.getCause();
                }
                return new java.lang.Object[] {java.lang.System.nanoTime() - started, null};
            } catch (java.lang.Throwable t) {
                if (t instanceof java.lang.VirtualMachineError && !(t instanceof java.lang.StackOverflowError)) {
                    __bwOutOfMemory = true;  // a warm JVM is not trusted with another sample after this
                }
                return new java.lang.Object[] {java.lang.System.nanoTime() - started, t};
            }
        }
    }

    static final class __BwThreads implements java.util.concurrent.ThreadFactory {
        private final Tests tests;
        __BwThreads(Tests tests) { this.tests = tests; }
        @java.lang.Override public java.lang.Thread newThread(java.lang.Runnable r) {
            java.lang.Thread t = new java.lang.Thread(r, "benchwright-test");
            t.setDaemon(true);
            tests.worker = t;
            return t;
        }
    }

    static final class __BwOnExit implements java.lang.Runnable {
        private final Channel ch;
        private final Tests tests;
        __BwOnExit(Channel ch, Tests tests) { this.ch = ch; this.tests = tests; }
        @java.lang.Override public void run() {
            if (__bwFinished) return;
            __bwFlushAll();
            java.lang.StringBuilder sb = new java.lang.StringBuilder("{\"ev\":\"exit\",\"i\":");
            sb.append(__bwCurrent).append(",\"out\":");
            __bwJson(sb, __bwTakeOutput());
            ch.emit(sb.append('}').toString());
            __bwUsage(ch, tests);
        }
    }

    static long[] __bwTimeouts(java.lang.String limits, int n) {
        // every test's own time limit in ms, comma-separated; the last one stands for any test after
        final java.lang.String[] limitsMs = limits.split(",");
        final long[] timeoutNanos = new long[java.lang.Math.max(n, 1)];
        for (int i = 0; i < timeoutNanos.length; i++) {
            timeoutNanos[i] = java.lang.Long.parseLong(limitsMs[java.lang.Math.min(i, limitsMs.length - 1)].trim()) * 1000000L;
        }
        return timeoutNanos;
    }

    // Runs the n tests, one result line each, then the usage line and "done". True: a test
    // outlived its limit (it was reported with every later test not run); the JVM must halt.
    static boolean __bwRunAll(Channel ch, Tests tests, int n, long[] timeoutNanos) throws java.lang.Exception {
        ch.emit("{\"ev\":\"begin\",\"n\":" + n + "}");
        java.util.concurrent.ExecutorService pool =
            java.util.concurrent.Executors.newSingleThreadExecutor(new __BwThreads(tests));
        for (int i = 0; i < n; i++) {
            __bwCurrent = i;
            ch.emit("{\"ev\":\"start\",\"i\":" + i + "}");
            final long submitted = java.lang.System.nanoTime();
            java.util.concurrent.Future<java.lang.Object[]> future = pool.submit(new __BwTest(i, tests));
            long nanos;
            java.lang.Throwable thrown;
            try {
                java.lang.Object[] r = future.get(timeoutNanos[i], java.util.concurrent.TimeUnit.NANOSECONDS);
                nanos = (java.lang.Long) r[0];
                thrown = (java.lang.Throwable) r[1];
            } catch (java.util.concurrent.TimeoutException e) {
                long waited = java.lang.System.nanoTime() - submitted;
                java.lang.Thread worker = tests.worker;
                java.lang.StackTraceElement[] where = worker == null ? null : worker.getStackTrace();
                __bwFlushAll();
                ch.emit(__bwRecord(i, "timeout", waited, null, where, __bwTakeOutput()));
                for (int j = i + 1; j < n; j++) ch.emit(__bwRecord(j, "not_run", -1, null, null, null));
                __bwFinished = true;
                __bwUsage(ch, tests);
                ch.emit("{\"ev\":\"done\"}");
                return true;
            } catch (java.util.concurrent.ExecutionException e) {
                nanos = java.lang.System.nanoTime() - submitted;
                thrown = e.getCause();
            }
            __bwFlushAll();
            java.lang.String out = __bwTakeOutput();
            java.lang.String status = thrown == null ? "pass" : thrown instanceof java.lang.AssertionError ? "fail" : "error";
            ch.emit(__bwRecord(i, status, nanos, thrown, null, out));
        }
        __bwFinished = true;
        __bwUsage(ch, tests);  // while the worker thread is still there: its CPU time is read from it
        pool.shutdown();
        pool.awaitTermination(1, java.util.concurrent.TimeUnit.SECONDS);  // its stack unmapped before memory is read
        ch.emit("{\"ev\":\"done\"}");
        return false;
    }

    public static void main(java.lang.String[] args) throws java.lang.Exception {
        if (args.length == 1 && args[0].equals("--serve")) {
            __bwServe();
            return;
        }
        final Channel ch = new Channel(new java.io.FileOutputStream(java.io.FileDescriptor.out), __bwPrefix());
        __bwCap = java.lang.Integer.parseInt(args[1]);
        __bwClass = args[2];
        final Tests tests = new Tests(args[2], null);
        final int n = java.lang.Integer.parseInt(args[3]);
        final long[] timeoutNanos = __bwTimeouts(args[0], n);
        // what tests print is captured (and kept per test), not passed on: the JVM's stdout is
        // the result channel and its stderr is for the JVM's own messages
        java.lang.System.setOut(new java.io.PrintStream(new __BwTee(), false, "UTF-8"));
        java.lang.System.setErr(new java.io.PrintStream(new __BwTee(), false, "UTF-8"));
        java.lang.Runtime.getRuntime().addShutdownHook(new java.lang.Thread(new __BwOnExit(ch, tests)));
        __bwRunAll(ch, tests, n, timeoutNanos);
        java.lang.Runtime.getRuntime().halt(0);
    }

    // ---- the warm test JVM: several samples, each in a class loader of its own

    // A sample's classes, defined from the bytes the harness sent; the JDK's classes come from the
    // platform loader, so nothing of benchwright's (this runner) can be named by a sample.
    static final class SampleLoader extends java.lang.ClassLoader {
        private final java.util.Map<java.lang.String, byte[]> classes;
        SampleLoader(java.util.Map<java.lang.String, byte[]> classes) {
            super("bw-sample", java.lang.ClassLoader.getPlatformClassLoader());
            this.classes = classes;
        }
        @java.lang.Override protected java.lang.Class<?> findClass(java.lang.String name) throws java.lang.ClassNotFoundException {
            byte[] b = classes.get(name);
            if (b == null) throw new java.lang.ClassNotFoundException(name);
            return defineClass(name, b, 0, b.length);
        }
    }

    // Peak resident memory counts from here: the kernel's high-water mark reset to the current
    // resident size (writing 5 to /proc/self/clear_refs); false where the kernel refuses.
    static boolean __bwResetPeak() {
        try (java.io.FileOutputStream out = new java.io.FileOutputStream("/proc/self/clear_refs")) {
            out.write('5');
            return true;
        } catch (java.lang.Throwable e) {
            return false;
        }
    }

    // Request, one ASCII line on stdin:
    //   <nonce> <limits ms> <output cap> <test class> <n> <b64 class name>:<b64 class file> ...
    // Answer, one line on stdout: "BWJ <nonce> <b64 of the result lines>" -- the lines a JVM of
    // its own would have written ("BWR <nonce> {json}"). After it, the next request, or nothing
    // more: it halts when a test outlived its limit or the JVM ran out of memory.
    // The harness sends only samples whose class files call nothing that reaches beyond them
    // (benchwright/lang/javagate.py): no threads, reflection, files, System.exit or JDK settings.
    static void __bwServe() throws java.lang.Exception {
        java.io.BufferedReader in = new java.io.BufferedReader(
            new java.io.InputStreamReader(new java.io.FileInputStream(java.io.FileDescriptor.in), java.nio.charset.StandardCharsets.US_ASCII));
        java.io.PrintStream answers = new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "US-ASCII");
        java.util.Base64.Decoder dec = java.util.Base64.getDecoder();
        java.lang.System.gc();
        final long baseline = __bwStatusBytes("\nVmRSS:");  // resident memory before any sample
        answers.println("BWJ ready");
        answers.flush();
        java.lang.String line;
        while ((line = in.readLine()) != null) {
            java.lang.String[] parts = line.split(" ");
            java.lang.String nonce = parts[0];
            __bwCap = java.lang.Integer.parseInt(parts[2]);
            __bwClass = parts[3];
            int n = java.lang.Integer.parseInt(parts[4]);
            java.util.Map<java.lang.String, byte[]> classes = new java.util.HashMap<>();
            for (int k = 5; k < parts.length; k++) {
                java.lang.String[] kv = parts[k].split(":", 2);
                classes.put(new java.lang.String(dec.decode(kv[0]), java.nio.charset.StandardCharsets.UTF_8), dec.decode(kv[1]));
            }
            java.io.ByteArrayOutputStream lines = new java.io.ByteArrayOutputStream();
            Channel ch = new Channel(lines, ("BWR " + nonce + " ").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            // streams of its own: no state of an earlier sample's (a closed stream, half a
            // character in the encoder) reaches this one's output
            java.lang.System.setOut(new java.io.PrintStream(new __BwTee(), false, "UTF-8"));
            java.lang.System.setErr(new java.io.PrintStream(new __BwTee(), false, "UTF-8"));
            __bwTakeOutput();
            __bwCurrent = -1;
            __bwFinished = false;
            java.lang.System.gc();  // what earlier samples left is not this one's memory
            boolean peakReset = __bwResetPeak();
            Tests tests = new Tests(parts[3], new SampleLoader(classes));
            boolean halt = __bwRunAll(ch, tests, n, __bwTimeouts(parts[1], n));
            long rss = __bwStatusBytes("\nVmRSS:");
            // a JVM that now holds much more than before its first sample would report it as the
            // next sample's memory (as would one whose peak cannot be reset): the next sample
            // gets a new one. The answer says so ("last"), so that the harness starts it at once
            // instead of sending the next sample to a JVM that is halting.
            boolean last = halt || __bwOutOfMemory || !peakReset || baseline < 0 || rss < 0
                || rss > baseline + __BW_RSS_SLACK;
            answers.println("BWJ " + nonce + " " + java.util.Base64.getEncoder().encodeToString(lines.toByteArray())
                + (last ? " last" : ""));
            answers.flush();
            if (last) {
                java.lang.Runtime.getRuntime().halt(0);
            }
        }
        java.lang.Runtime.getRuntime().halt(0);
    }
}
