// PropertiesOracle: the reference the Go tests compare ParseProperties
// with. Each input line is one .properties file, base64; each output line
// is what java.util.Properties.load(InputStream) made of it: ERR, or the
// entries sorted by key, each key and value as UTF-16 hex, key=value
// joined by ','. Run: java testdata/java/PropertiesOracle.java < cases
import java.io.*;
import java.util.*;

public class PropertiesOracle {
    static String hex(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) b.append(String.format("%04x", (int) s.charAt(i)));
        return b.toString();
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "US-ASCII"));
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "US-ASCII");
        String line;
        while ((line = in.readLine()) != null) {
            byte[] data = Base64.getDecoder().decode(line);
            Properties p = new Properties();
            try {
                p.load(new ByteArrayInputStream(data));
            } catch (IllegalArgumentException e) {
                out.println("ERR");
                continue;
            }
            TreeMap<String, String> sorted = new TreeMap<>();
            for (String k : p.stringPropertyNames()) sorted.put(k, p.getProperty(k));
            StringBuilder b = new StringBuilder("OK");
            for (Map.Entry<String, String> e : sorted.entrySet()) b.append(',').append(hex(e.getKey())).append('=').append(hex(e.getValue()));
            out.println(b);
        }
        out.flush();
    }
}
