// benchwright java-jacoco: runs every test case of the generated test class under the JaCoCo
// agent, then writes the coverage data (see benchwright/criteria/java_coverage.py).
//
// java -javaagent:jacocoagent.jar=destfile=...,excludes=... -cp out BwCoverageRun \
//      <test class> <test count> <limits in ms, comma-separated> <log file>
//
// Each test runs on a worker thread with its own time limit. A failing, crashing or timed-out
// test does not stop the others: a timed-out test's thread is left running (a Java thread
// cannot be stopped safely) and the next test gets a new thread. The output of the tests is
// discarded. The log gets "begin <n>", "start <i>" and "<status> <i>" lines and, after the
// coverage data is written, "done"; then the JVM halts (stuck threads and the solution's
// shutdown hooks are not waited for). System.exit in a test ends the JVM early: the agent's
// own shutdown hook still writes the data, and the log has no "done".
//
// Or, with the solution's classes instrumented beforehand (JaCoCo's offline instrumentation) and
// the agent's jar on the class path instead of -javaagent:
//
// java -Djacoco-agent.destfile=... -Dbw.jacoco.offline=<JaCoCo's runtime class Offline> \
//      -cp out:jacocoagent.jar BwCoverageRun ...
//
// the runtime is started first, as the agent starts before main (the same data, the same hook).
public final class BwCoverageRun {
    private BwCoverageRun() { }

    private static java.io.PrintStream log;

    static final class Test implements java.util.concurrent.Callable<java.lang.Throwable> {
        private final java.lang.reflect.Method run;
        private final int index;

        Test(java.lang.reflect.Method run, int index) {
            this.run = run;
            this.index = index;
        }

        @java.lang.Override
        public java.lang.Throwable call() {
            try {
                run.invoke(null, index);
                return null;
            } catch (java.lang.reflect.InvocationTargetException e) {
                return e.getCause() != null ? e.getCause() : e;
            } catch (java.lang.Throwable e) {
                return e;
            }
        }
    }

    static final class Daemons implements java.util.concurrent.ThreadFactory {
        @java.lang.Override
        public java.lang.Thread newThread(java.lang.Runnable r) {
            java.lang.Thread t = new java.lang.Thread(r, "benchwright-coverage");
            t.setDaemon(true);
            return t;
        }
    }

    private static void say(java.lang.String line) {
        log.println(line);
        log.flush();
    }

    public static void main(java.lang.String[] args) throws java.lang.Exception {
        log = new java.io.PrintStream(new java.io.FileOutputStream(args[3]), true, "UTF-8");
        int n = java.lang.Integer.parseInt(args[1]);
        java.lang.String[] limits = args[2].split(",");
        java.io.PrintStream quiet = new java.io.PrintStream(java.io.OutputStream.nullOutputStream());
        java.lang.System.setOut(quiet);
        java.lang.System.setErr(quiet);
        java.lang.String offline = java.lang.System.getProperty("bw.jacoco.offline");
        if (offline != null) {  // instrumented classes, no agent: start JaCoCo's runtime as the agent would
            java.lang.reflect.Method start = java.lang.Class.forName(offline).getDeclaredMethod("getRuntimeData");
            start.setAccessible(true);
            start.invoke(null);
        }
        say("begin " + n);
        java.lang.reflect.Method run = null;
        try {
            run = java.lang.Class.forName(args[0]).getDeclaredMethod("__bwRun", int.class);
            run.setAccessible(true);
        } catch (java.lang.Throwable e) {
            say("error-loading " + e.toString().replace('\n', ' '));
        }
        java.util.concurrent.ExecutorService pool =
            java.util.concurrent.Executors.newSingleThreadExecutor(new Daemons());
        for (int i = 0; run != null && i < n; i++) {
            long limitMs = java.lang.Long.parseLong(limits[java.lang.Math.min(i, limits.length - 1)].trim());
            say("start " + i);
            java.util.concurrent.Future<java.lang.Throwable> future = pool.submit(new Test(run, i));
            java.lang.String status;
            try {
                java.lang.Throwable thrown = future.get(limitMs, java.util.concurrent.TimeUnit.MILLISECONDS);
                status = thrown == null ? "pass" : thrown instanceof java.lang.AssertionError ? "fail" : "error";
            } catch (java.util.concurrent.TimeoutException e) {
                status = "timeout";
                pool.shutdownNow();
                pool = java.util.concurrent.Executors.newSingleThreadExecutor(new Daemons());
            } catch (java.util.concurrent.ExecutionException e) {
                status = "error";
            }
            say(status + " " + i);
        }
        org.jacoco.agent.rt.RT.getAgent().dump(false);
        say("done");
        java.lang.Runtime.getRuntime().halt(0);
    }
}
