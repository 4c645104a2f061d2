// benchwright's warm javac: one JVM per executor thread compiles every Java sample of that thread
// (see benchwright/lang/javacserver.py). It runs none of a sample's code: javac with -proc:none
// executes nothing it compiles. Started as `java BwJavac.java <javac flags>` in a sandbox.
//
// Request, one ASCII line on stdin:  <nonce> <b64 name>:<b64 source> ...
// Answer, one ASCII line on stdout:  BWC <nonce> <exit> <b64 javac output> [<b64 path>:<b64 class>]...
// (a class file's path in the output folder, with '/' between folders)
// Every job compiles in a folder of its own, removed before the answer is written; javac's
// messages name the sources as a command-line javac in that folder would ("Solution.java:3:").
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.stream.*;
import javax.tools.*;

public class BwJavac {
    static final int MESSAGE_CHARS = 256 * 1024;  // javac repeats a long source line with each error

    public static void main(String[] args) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "US-ASCII");
        System.setOut(new PrintStream(OutputStream.nullOutputStream()));
        Base64.Decoder dec = Base64.getDecoder();
        Base64.Encoder enc = Base64.getEncoder();
        out.println("BWC ready");
        out.flush();
        long jobs = 0;
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split(" ");
            String nonce = parts[0];
            Path dir = Paths.get("bwjob" + (jobs++));
            Path outDir = dir.resolve("out");
            Files.createDirectories(outDir);
            String prefix = dir.toString() + File.separator;
            List<String> argv = new ArrayList<>(Arrays.asList(args));
            argv.addAll(List.of("-d", outDir.toString(), "-cp", dir.toString(), "-sourcepath", dir.toString()));
            for (int i = 1; i < parts.length; i++) {
                String[] kv = parts[i].split(":", 2);
                String name = new String(dec.decode(kv[0]), StandardCharsets.UTF_8);
                Path p = dir.resolve(name);
                Files.createDirectories(p.getParent());
                Files.write(p, dec.decode(kv[1]));
                argv.add(p.toString());
            }
            ByteArrayOutputStream diag = new ByteArrayOutputStream();
            int code;
            try {
                code = javac.run(InputStream.nullInputStream(), diag, diag, argv.toArray(new String[0]));
            } catch (Throwable t) {  // javac's own failure (out of memory...): not a compile error
                code = -1;
                diag.reset();
                diag.write(("javac failed: " + t).getBytes(StandardCharsets.UTF_8));
            }
            String messages = diag.toString(StandardCharsets.UTF_8).replace(prefix, "");
            if (messages.length() > MESSAGE_CHARS) messages = messages.substring(0, MESSAGE_CHARS) + "\n...";
            StringBuilder answer = new StringBuilder("BWC ").append(nonce).append(' ').append(code).append(' ')
                .append(enc.encodeToString(messages.getBytes(StandardCharsets.UTF_8)));
            if (code == 0) {
                try (Stream<Path> classes = Files.walk(outDir)) {
                    for (Path p : classes.sorted().collect(Collectors.toList())) {
                        if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) continue;
                        String name = outDir.relativize(p).toString().replace(File.separatorChar, '/');
                        answer.append(' ')
                            .append(enc.encodeToString(name.getBytes(StandardCharsets.UTF_8)))
                            .append(':').append(enc.encodeToString(Files.readAllBytes(p)));
                    }
                }
            }
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).collect(Collectors.toList())) {
                    Files.deleteIfExists(p);
                }
            }
            out.println(answer);
            out.flush();
        }
    }
}
