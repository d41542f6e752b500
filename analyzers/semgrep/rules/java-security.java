import java.io.InputStream;
import java.io.ObjectInputStream;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.Statement;
import javax.crypto.Cipher;
import javax.net.ssl.HttpsURLConnection;
import javax.xml.parsers.DocumentBuilderFactory;

public class Example {
    // ruleid: java-hardcoded-secret
    private static final String DB_PASSWORD = "hunter2";
    // ok: java-hardcoded-secret
    private static final String USER_NAME = "alice";

    void shell(String name) throws Exception {
        // ruleid: java-shell-injection
        Runtime.getRuntime().exec("ls " + name);
        // ok: java-shell-injection
        Runtime.getRuntime().exec("ls -l");
    }

    void sql(Connection conn, String id) throws Exception {
        Statement st = conn.createStatement();
        // ruleid: java-sql-string-concat
        st.executeQuery("SELECT * FROM users WHERE id = '" + id + "'");
        // ok: java-sql-string-concat
        conn.prepareStatement("SELECT * FROM users WHERE id = ?");
    }

    void crypto() throws Exception {
        // ruleid: java-weak-hash
        MessageDigest.getInstance("MD5");
        // ok: java-weak-hash
        MessageDigest.getInstance("SHA-256");
        // ruleid: java-weak-cipher
        Cipher.getInstance("DES/CBC/PKCS5Padding");
        // ruleid: java-weak-cipher
        Cipher.getInstance("AES/ECB/PKCS5Padding");
        // ok: java-weak-cipher
        Cipher.getInstance("AES/GCM/NoPadding");
    }

    Object read(InputStream in) throws Exception {
        ObjectInputStream ois = new ObjectInputStream(in);
        // ruleid: java-unsafe-deserialization
        return ois.readObject();
    }

    void xml() throws Exception {
        // ruleid: java-xml-external-entities
        DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance();
        dbf.newDocumentBuilder();
    }

    void safeXml() throws Exception {
        // ok: java-xml-external-entities
        DocumentBuilderFactory dbf = DocumentBuilderFactory.newInstance();
        dbf.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        dbf.newDocumentBuilder();
    }

    void tls() {
        // ruleid: java-tls-verification-disabled
        HttpsURLConnection.setDefaultHostnameVerifier((host, session) -> true);
    }
}
