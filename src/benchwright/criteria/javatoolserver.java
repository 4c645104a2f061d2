// benchwright's warm Java analysers: one JVM per executor thread runs Checkstyle or PMD on every
// Java sample of that thread (see benchwright/criteria/javatoolserver.py), or JaCoCo's analysis of
// a sample's coverage data. None runs the code it analyses. Started as `java -cp <the tool's classpath> BwTool.java <tool> <arguments>` in a
// sandbox; the arguments are the tool's command line with {report} and {file} where the report's
// path and the solution's go.
//
// Request, one ASCII line on stdin:  <nonce> <b64 argument> <b64 file name>:<b64 data> ...
// Answer, one ASCII line on stdout:  BWT <nonce> <exit> <b64 what the tool printed> <b64 report | ->
// In the arguments, {file} is the first file's path, {dir} the request's folder, {report} the
// report's path and {arg} the request's argument. A file name is relative, without "..".
//
// Each request is analysed in a folder of its own, removed before the answer is written, by the
// tool's own command-line code called in this JVM without ending it: PMD's own parsing of
// `pmd check` and its analysis, with its rule set loaded once; and Checkstyle's Main.main as it is less its System.exit (its argument
// parsing and execute(), its stack trace and error count on standard error, its exit statuses).
import java.io.*;
import java.lang.reflect.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.stream.*;

public class BwTool {
    static final int OUTPUT_CHARS = 256 * 1024;

    public static void main(String[] args) throws Exception {
        String tool = args[0];
        String[] template = Arrays.copyOfRange(args, 1, args.length);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "US-ASCII");
        Base64.Decoder dec = Base64.getDecoder();
        Base64.Encoder enc = Base64.getEncoder();
        Path base = Paths.get("").toAbsolutePath();
        out.println("BWT ready");
        out.flush();
        long jobs = 0;
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split(" ");
            String nonce = parts[0];
            Path dir = base.resolve("bwjob" + (jobs++));
            Files.createDirectories(dir);
            String arg = new String(dec.decode(parts[1]), StandardCharsets.UTF_8);
            Path file = null;
            for (int i = 2; i < parts.length; i++) {
                String[] kv = parts[i].split(":", 2);
                Path name = Paths.get(new String(dec.decode(kv[0]), StandardCharsets.UTF_8)).normalize();
                if (name.isAbsolute() || name.startsWith("..") || name.toString().isEmpty()) {
                    throw new IllegalArgumentException("a file name outside the request's folder: " + name);
                }
                Path p = dir.resolve(name);
                Files.createDirectories(p.getParent());
                Files.write(p, dec.decode(kv[1]));
                if (file == null) file = p;
            }
            Path report = dir.resolve("bw_report");
            String[] argv = new String[template.length];
            for (int i = 0; i < template.length; i++) {
                argv[i] = template[i].replace("{report}", report.toString()).replace("{file}", String.valueOf(file))
                    .replace("{dir}", dir.toString()).replace("{arg}", arg);
            }
            ByteArrayOutputStream printed = new ByteArrayOutputStream();
            PrintStream capture = new PrintStream(printed, true, "UTF-8");
            PrintStream oldOut = System.out, oldErr = System.err;
            System.setOut(capture);
            System.setErr(capture);
            int code;
            try {
                code = tool.equals("pmd") ? pmd(argv) : tool.equals("jacoco") ? jacoco(argv) : checkstyle(argv);
            } catch (Throwable t) {  // the tool's own failure, not a finding: the harness falls back
                code = -1;
                t.printStackTrace(capture);
            } finally {
                System.setOut(oldOut);
                System.setErr(oldErr);
            }
            String text = printed.toString(StandardCharsets.UTF_8);
            if (text.length() > OUTPUT_CHARS) text = text.substring(text.length() - OUTPUT_CHARS);
            String written = Files.isRegularFile(report, LinkOption.NOFOLLOW_LINKS)
                ? enc.encodeToString(Files.readAllBytes(report)) : "-";
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                    Files.deleteIfExists(p);
                }
            }
            out.println("BWT " + nonce + " " + code + " "
                + enc.encodeToString(text.getBytes(StandardCharsets.UTF_8)) + " " + written);
            out.flush();
        }
    }

    // JaCoCo's analysis: benchwright's BwCoverageReport (on the class path), as its command line;
    // argv: <exec file> <classes dir> <source file name> <report>. With "--instrument" for the
    // source file name, the classes instrumented for JaCoCo's offline runtime instead.
    static int jacoco(String[] argv) throws Exception {
        Class<?> report = Class.forName("BwCoverageReport");
        if (argv[2].equals("--instrument")) {
            try {  // a class JaCoCo cannot instrument (a sealed type) is the sample's, not the server's
                report.getMethod("instrument", String.class, String.class).invoke(null, argv[1], argv[3]);
            } catch (InvocationTargetException e) {
                e.getCause().printStackTrace();
                return 3;
            }
        } else {
            report.getMethod("main", String[].class).invoke(null, (Object) argv);
        }
        return 0;
    }

    static Object pmdRules;  // the rule set, loaded once: most of what a PMD run costs

    // PMD's own `pmd check` parsing of the arguments and configuration (PmdCommand.toConfiguration),
    // then the analysis PmdCommand runs, with the rule set it would load loaded on the first request
    // only (the rule set file is the server's, written before it started: no sample changes it).
    static int pmd(String[] argv) throws Exception {
        Class<?> commandLine = Class.forName("picocli.CommandLine");
        Object root = Class.forName("net.sourceforge.pmd.cli.commands.internal.PmdRootCommand")
            .getConstructor().newInstance();
        Object cli = commandLine.getConstructor(Object.class).newInstance(root);
        commandLine.getMethod("setCaseInsensitiveEnumValuesAllowed", boolean.class).invoke(cli, true);
        Object parsed = commandLine.getMethod("parseArgs", String[].class).invoke(cli, (Object) argv);
        Class<?> parseResult = Class.forName("picocli.CommandLine$ParseResult");
        Object sub = parseResult.getMethod("subcommand").invoke(parsed);
        Object spec = parseResult.getMethod("commandSpec").invoke(sub);
        Object command = spec.getClass().getMethod("userObject").invoke(spec);
        Method toConfiguration = command.getClass().getDeclaredMethod("toConfiguration");
        toConfiguration.setAccessible(true);
        Object conf = toConfiguration.invoke(command);
        Class<?> abstractConf = Class.forName("net.sourceforge.pmd.AbstractConfiguration");
        Class<?> pmdConf = Class.forName("net.sourceforge.pmd.PMDConfiguration");
        @SuppressWarnings("unchecked")
        List<String> paths = new ArrayList<>((List<String>) pmdConf.getMethod("getRuleSetPaths").invoke(conf));
        if (pmdRules == null) {
            Class<?> loaderClass = Class.forName("net.sourceforge.pmd.lang.rule.RuleSetLoader");
            Object loader = loaderClass.getMethod("fromPmdConfig", pmdConf).invoke(null, conf);
            if (paths.size() != 1) throw new IllegalArgumentException("one rule set expected: " + paths);
            pmdRules = loaderClass.getMethod("loadFromResource", String.class).invoke(loader, paths.get(0));
        }
        pmdConf.getMethod("setRuleSets", List.class).invoke(conf, new ArrayList<String>());
        Class<?> analysisClass = Class.forName("net.sourceforge.pmd.PmdAnalysis");
        try (AutoCloseable analysis = (AutoCloseable) analysisClass.getMethod("create", pmdConf).invoke(null, conf)) {
            analysisClass.getMethod("addRuleSet", Class.forName("net.sourceforge.pmd.lang.rule.RuleSet"))
                .invoke(analysis, pmdRules);
            Object stats = analysisClass.getMethod("runAndReturnStats").invoke(analysis);
            int errors = (Integer) stats.getClass().getMethod("getNumErrors").invoke(stats);
            int violations = (Integer) stats.getClass().getMethod("getNumViolations").invoke(stats);
            return errors > 0 ? 5 : violations > 0 ? 4 : 0;
        }
    }

    static int checkstyle(String[] argv) throws Exception {
        Class<?> main = Class.forName("com.puppycrawl.tools.checkstyle.Main");
        Class<?> optionsClass = Class.forName("com.puppycrawl.tools.checkstyle.Main$CliOptions");
        Constructor<?> make = optionsClass.getDeclaredConstructors()[0];
        make.setAccessible(true);
        Object options = make.newInstance(new Object[make.getParameterCount()]);
        Class<?> commandLine = Class.forName("picocli.CommandLine");
        Object cli = commandLine.getConstructor(Object.class).newInstance(options);
        commandLine.getMethod("setUsageHelpWidth", int.class).invoke(cli, 100);
        commandLine.getMethod("setCaseInsensitiveEnumValuesAllowed", boolean.class).invoke(cli, true);
        Object parsed = commandLine.getMethod("parseArgs", String[].class).invoke(cli, (Object) argv);
        Method execute = main.getDeclaredMethod("execute", Class.forName("picocli.CommandLine$ParseResult"),
            optionsClass);
        execute.setAccessible(true);
        int status;
        int errors;
        try {
            status = (Integer) execute.invoke(null, parsed, options);
            errors = status;
        } catch (InvocationTargetException e) {  // as Main.main: the stack trace, one error, status -2
            Throwable cause = e.getCause();
            if (!cause.getClass().getName().equals("com.puppycrawl.tools.checkstyle.api.CheckstyleException")) {
                throw e;
            }
            cause.printStackTrace();
            status = -2;
            errors = 1;
        }
        if (errors > 0) {
            Class<?> message = Class.forName("com.puppycrawl.tools.checkstyle.api.LocalizedMessage");
            Object counter = message.getConstructor(int.class, String.class, String.class, Object[].class,
                String.class, Class.class, String.class).newInstance(1, "com.puppycrawl.tools.checkstyle.messages",
                "Main.errorCounter", new Object[] {String.valueOf(errors)}, null, main, null);
            System.err.println(message.getMethod("getMessage").invoke(counter));
        }
        return status & 0xff;
    }
}
