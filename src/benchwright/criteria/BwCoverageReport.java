// benchwright java-jacoco: reads the JaCoCo execution data of a run of the tests and writes the
// coverage of one source file, line by line (see benchwright/criteria/java_coverage.py).
//
// java -cp out:org.jacoco.core.jar:asm*.jar BwCoverageReport <exec file> <classes dir>
//      <source file name> <report file>
//
// It analyses every class file under the classes dir with org.jacoco.core's Analyzer and keeps
// the classes compiled from the source file (nested and other top-level classes included).
// The report has one "L <line> <status> <missed branches> <covered branches>" line per line
// with code (status: 1 not covered, 2 fully covered, 3 partly covered; ICounter's constants),
// an "I <line>" line for a one-line no-argument constructor that never ran (the implicit
// constructor of a class of static methods is one), a "C <class> nomatch" line for a class
// whose execution data does not match its class file, and "end" last.
//
// BwCoverageReport.instrument (called by benchwright's warm tool server) writes the class files
// of a folder instrumented for JaCoCo's offline runtime instead.
public final class BwCoverageReport {
    private BwCoverageReport() { }

    public static void main(java.lang.String[] args) throws java.lang.Exception {
        org.jacoco.core.tools.ExecFileLoader loader = new org.jacoco.core.tools.ExecFileLoader();
        loader.load(new java.io.File(args[0]));
        org.jacoco.core.analysis.CoverageBuilder builder = new org.jacoco.core.analysis.CoverageBuilder();
        org.jacoco.core.analysis.Analyzer analyzer =
            new org.jacoco.core.analysis.Analyzer(loader.getExecutionDataStore(), builder);
        analyzer.analyzeAll(new java.io.File(args[1]));
        java.lang.String source = args[2];
        java.lang.StringBuilder out = new java.lang.StringBuilder();
        for (org.jacoco.core.analysis.IClassCoverage c : builder.getClasses()) {
            if (!source.equals(c.getSourceFileName())) {
                continue;
            }
            if (c.isNoMatch()) {
                out.append("C ").append(c.getName()).append(" nomatch\n");
            }
            for (org.jacoco.core.analysis.IMethodCoverage m : c.getMethods()) {
                if (m.getName().equals("<init>") && m.getDesc().equals("()V") && m.getFirstLine() > 0
                        && m.getFirstLine() == m.getLastLine() && m.getInstructionCounter().getCoveredCount() == 0) {
                    out.append("I ").append(m.getFirstLine()).append('\n');
                }
            }
        }
        for (org.jacoco.core.analysis.ISourceFileCoverage file : builder.getSourceFiles()) {
            if (!file.getName().equals(source) || !file.getPackageName().isEmpty()) {
                continue;
            }
            for (int line = file.getFirstLine(); line >= 0 && line <= file.getLastLine(); line++) {
                org.jacoco.core.analysis.ILine l = file.getLine(line);
                int status = l.getStatus();
                if (status == org.jacoco.core.analysis.ICounter.EMPTY) {
                    continue;
                }
                org.jacoco.core.analysis.ICounter branches = l.getBranchCounter();
                out.append("L ").append(line).append(' ').append(status).append(' ')
                    .append(branches.getMissedCount()).append(' ').append(branches.getCoveredCount()).append('\n');
            }
        }
        out.append("end\n");
        try (java.io.Writer w = new java.io.OutputStreamWriter(
                new java.io.FileOutputStream(args[3]), java.nio.charset.StandardCharsets.UTF_8)) {
            w.write(out.toString());
        }
    }

    // The class files under a folder, instrumented for JaCoCo's offline runtime (the probes the
    // agent would insert as they load, read back by the same analysis): one
    // "<base64 relative path> <base64 class file>" line per class, then "end". Any class JaCoCo
    // cannot instrument fails the whole request (the caller then runs the tests under the agent).
    public static void instrument(java.lang.String classes, java.lang.String report) throws java.lang.Exception {
        org.jacoco.core.instr.Instrumenter instrumenter = new org.jacoco.core.instr.Instrumenter(
            new org.jacoco.core.runtime.OfflineInstrumentationAccessGenerator());
        java.nio.file.Path root = java.nio.file.Paths.get(classes);
        java.util.Base64.Encoder enc = java.util.Base64.getEncoder();
        java.lang.StringBuilder out = new java.lang.StringBuilder();
        java.util.List<java.nio.file.Path> files;
        try (java.util.stream.Stream<java.nio.file.Path> walk = java.nio.file.Files.walk(root)) {
            files = walk.filter(p -> java.nio.file.Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS))
                .sorted().collect(java.util.stream.Collectors.toList());
        }
        for (java.nio.file.Path file : files) {
            java.lang.String name = root.relativize(file).toString();
            byte[] done = instrumenter.instrument(java.nio.file.Files.readAllBytes(file), name);
            out.append(enc.encodeToString(name.getBytes(java.nio.charset.StandardCharsets.UTF_8))).append(' ')
                .append(enc.encodeToString(done)).append('\n');
        }
        out.append("end\n");
        try (java.io.Writer w = new java.io.OutputStreamWriter(
                new java.io.FileOutputStream(report), java.nio.charset.StandardCharsets.US_ASCII)) {
            w.write(out.toString());
        }
    }
}
